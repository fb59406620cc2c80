"""Python functions called from jitted code as an XLA FFI custom call, so that compiled
programs that call them can be kept in JAX's persistent compilation cache.

`jax.pure_callback` embeds a pointer to a Python object in the compiled program, so JAX
refuses to write such programs to its persistent cache, and every run compiles them again.
`host_call` instead emits a custom call to one FFI target (`TARGET`), whose handler is a C
function made by ctypes that calls back into Python; the function to run is named by a
string attribute of the call (its key), looked up in this process's registry. The program
then holds only names, so a later process that registers a function under the same key
loads it from the cache and runs it.

The handler speaks XLA's typed FFI C API (`xla/ffi/api/c_api.h`, shipped with jaxlib, API
version 0.3): it answers XLA's metadata query, reads the call frame's buffers as numpy
views, calls the function with the inputs and copies what it returns into the outputs.
A Python exception is handed back to XLA as an FFI error, which JAX raises with its message.
On an accelerator (JAX's default backend not the CPU) a host call is a `jax.pure_callback`.
"""

from __future__ import annotations

import ctypes
import math
import struct
import traceback
import weakref
from collections.abc import Callable, Sequence

import jax
import numpy as np

TARGET = "modular_ppo_host_call"
"""The FFI target every host call goes through."""


class _ByteSpan(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p), ("len", ctypes.c_size_t)]


class _ExtensionBase(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("type", ctypes.c_int),
                ("next", ctypes.c_void_p)]


class _Buffers(ctypes.Structure):
    """XLA_FFI_Args and XLA_FFI_Rets (the same layout)."""

    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("size", ctypes.c_int64), ("types", ctypes.POINTER(ctypes.c_int)),
                ("pointers", ctypes.POINTER(ctypes.c_void_p))]


class _Attrs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("size", ctypes.c_int64), ("types", ctypes.POINTER(ctypes.c_int)),
                ("names", ctypes.POINTER(ctypes.POINTER(_ByteSpan))),
                ("pointers", ctypes.POINTER(ctypes.c_void_p))]


class _CallFrame(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t),
                ("extension_start", ctypes.POINTER(_ExtensionBase)),
                ("api", ctypes.c_void_p), ("ctx", ctypes.c_void_p), ("stage", ctypes.c_int),
                ("args", _Buffers), ("rets", _Buffers), ("attrs", _Attrs),
                ("future", ctypes.c_void_p)]


class _ApiVersion(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("major_version", ctypes.c_int), ("minor_version", ctypes.c_int)]


class _Metadata(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("api_version", _ApiVersion),
                ("traits", ctypes.c_uint32), ("state_type_id", ctypes.c_int64)]


class _MetadataExtension(ctypes.Structure):
    _fields_ = [("extension_base", _ExtensionBase),
                ("metadata", ctypes.POINTER(_Metadata))]


class _ErrorCreateArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("message", ctypes.c_char_p), ("errc", ctypes.c_int)]


class _Api(ctypes.Structure):
    """The head of XLA_FFI_Api, up to its first function, XLA_FFI_Error_Create."""

    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("api_version", _ApiVersion), ("internal_api", ctypes.c_void_p),
                ("error_create", ctypes.CFUNCTYPE(ctypes.c_void_p,
                                                  ctypes.POINTER(_ErrorCreateArgs)))]


_METADATA_EXTENSION = 1
_ATTR_STRING = 4
_ERROR_INTERNAL = 13
_DTYPES = {code: np.dtype(t) for code, t in
           {1: np.bool_, 4: np.int32, 5: np.int64, 11: np.float32, 12: np.float64}.items()}
"""XLA_FFI_DataType -> numpy, for the types host calls pass."""

_owners: dict[str, tuple[weakref.ref, str]] = {}
"""key -> (a weak reference to the object, the name of its method to call)."""


def register(key: str, owner: object, method: str) -> None:
    """Make `owner.<method>` what `host_call(key, ...)` runs in this process, replacing what
    was registered under that key before. The method is looked up on each call (so a
    patched attribute is seen); the owner is held weakly: whoever made it keeps it alive
    for as long as programs that call it may run."""
    _owners[key] = (weakref.ref(owner), method)


def host_call(
    key: str, result_shapes: Sequence[jax.ShapeDtypeStruct], *inputs: jax.Array
) -> tuple[jax.Array, ...]:
    """Call the function registered under `key` with `inputs` as numpy arrays; it returns
    arrays of `result_shapes` (same order). Under vmap the function receives the whole
    batch, every input broadcast to the batch's leading axes (`vmap_method="broadcast_all"`,
    as `jax.pure_callback` does). The function must be pure: XLA may drop or repeat calls
    whose outputs are unused or recomputed."""
    if jax.default_backend() != "cpu":
        # On an accelerator XLA's buffers are device memory, which the handler cannot read:
        # there JAX's own host callback moves them (and such programs are not cached).
        return tuple(jax.pure_callback(lambda *arrays: _function(key)(*arrays),
                                       tuple(result_shapes), *inputs,
                                       vmap_method="broadcast_all"))
    call = jax.ffi.ffi_call(TARGET, tuple(result_shapes), vmap_method="broadcast_all")
    return tuple(call(*inputs, key=key))


def _function(key: str) -> Callable[..., Sequence[np.ndarray]]:
    owner, method = _owners.get(key, (lambda: None, ""))
    owner = owner()
    if owner is None:
        raise LookupError(f"host_call: nothing registered under {key!r} in this process (or "
                          "the object registered is gone)")
    return getattr(owner, method)


_BUFFER_HEAD = struct.Struct("QQi4xQqQ")
"""XLA_FFI_Buffer: struct_size, extension_start, dtype (enum, padded), data, rank, dims."""

_views: dict[bytes, tuple[int, bytes, np.ndarray]] = {}
"""A buffer's head (XLA_FFI_Buffer's bytes: dtype, data pointer, rank, dims pointer) -> its
dims pointer, the dims' bytes and a numpy view of it. XLA hands a compiled program's calls
the same buffers again and again; a view is fully defined by data pointer, dtype and
shape, so one made before is the right view of any buffer with the same three."""
_MAX_VIEWS = 4096


def _array(pointer: int) -> np.ndarray:
    """A numpy view of an XLA_FFI_Buffer (its bytes read with struct, several times faster
    than through the ctypes structure: a call has one buffer per state field, in and out),
    reused from `_views` where a buffer with the same data, dtype and shape was seen."""
    head = ctypes.string_at(pointer, _BUFFER_HEAD.size)
    seen = _views.get(head)
    if seen is not None and (not seen[1] or ctypes.string_at(seen[0], len(seen[1])) == seen[1]):
        return seen[2]
    _, _, dtype, data, rank, dims = _BUFFER_HEAD.unpack(head)
    dims_bytes = ctypes.string_at(dims, 8 * rank) if rank else b""
    shape = struct.unpack(f"{rank}q", dims_bytes)
    dtype = _DTYPES[dtype]
    size = math.prod(shape)
    if size == 0:
        return np.zeros(shape, dtype)
    raw = (ctypes.c_char * (size * dtype.itemsize)).from_address(data)
    view = np.frombuffer(raw, dtype).reshape(shape)
    if len(_views) >= _MAX_VIEWS:
        _views.clear()
    _views[head] = (dims, dims_bytes, view)
    return view


def _string_attrs(frame: _CallFrame) -> dict[str, str]:
    attrs = {}
    for i in range(frame.attrs.size):
        if frame.attrs.types[i] == _ATTR_STRING:
            name = frame.attrs.names[i].contents
            value = ctypes.cast(frame.attrs.pointers[i], ctypes.POINTER(_ByteSpan)).contents
            attrs[ctypes.string_at(name.ptr, name.len).decode()] = (
                ctypes.string_at(value.ptr, value.len).decode())
    return attrs


def _error(frame: _CallFrame, message: str) -> int:
    api = ctypes.cast(frame.api, ctypes.POINTER(_Api)).contents
    args = _ErrorCreateArgs(ctypes.sizeof(_ErrorCreateArgs), None,
                            message.encode(errors="replace"), _ERROR_INTERNAL)
    return api.error_create(ctypes.byref(args))


def _handle(frame_pointer) -> int | None:
    frame = frame_pointer.contents
    extension = frame.extension_start
    if extension and extension.contents.type == _METADATA_EXTENSION:
        metadata = ctypes.cast(extension, ctypes.POINTER(_MetadataExtension)).contents.metadata
        metadata.contents.api_version = _ApiVersion(ctypes.sizeof(_ApiVersion), None, 0, 3)
        metadata.contents.traits = 0
        metadata.contents.state_type_id = 0
        return None
    try:
        key = _string_attrs(frame)["key"]
        function = _function(key)
        inputs = [_array(frame.args.pointers[i]) for i in range(frame.args.size)]
        outputs = [_array(frame.rets.pointers[i]) for i in range(frame.rets.size)]
        results = function(*inputs)
        if len(results) != len(outputs):
            return _error(frame, f"host_call {key!r}: the function returned {len(results)} "
                                 f"arrays, the call expects {len(outputs)}")
        for output, result in zip(outputs, results):
            output[...] = result
        return None
    except Exception:  # noqa: BLE001 - every error goes back to XLA, which raises it
        return _error(frame, traceback.format_exc())


_HANDLER = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(_CallFrame))(_handle)
"""Kept for the process's lifetime: XLA holds its address."""
jax.ffi.register_ffi_target(TARGET, jax.ffi.pycapsule(_HANDLER), platform="cpu")
