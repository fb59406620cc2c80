"""TensorBoard event files read and rewound without TensorBoard itself.

An event file is a sequence of TFRecords (little-endian uint64 length, masked CRC-32C of
the length, the serialized `Event` protobuf, masked CRC-32C of it), as tensorboardX
writes them. A resumed run trains the steps after its checkpoint again, so the events
logged after that step are removed from the files themselves: every reader (TensorBoard's
loaders, a script over the protobufs) then sees each step once. tensorboardX's
`purge_step` instead appends a marker (SessionLog START) that TensorBoard 2.21's legacy
`EventAccumulator` honors but its `plugin_event_accumulator` does not (checked: the latter
still shows the old points).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

from tensorboardX.proto.event_pb2 import Event
from tensorboardX.record_writer import masked_crc32c

from modular_ppo.runs.atomic_write import write_atomically

EVENT_FILE_MARK = "tfevents"
"""What TensorBoard looks for in a file name to read it as an event file."""


def event_files(directory: Path) -> list[Path]:
    """The event files in `directory` (not its subfolders), in name order (= creation
    order: tensorboardX names them events.out.tfevents.<unix time>.<host>...)."""
    directory = Path(directory)
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.is_file() and EVENT_FILE_MARK in p.name)


def read_events(path: Path) -> list[Event]:
    """The `Event` protobufs of an event file, in order. A torn or corrupt record (a
    process killed while writing) ends the list: nothing after it can be framed reliably."""
    return [Event.FromString(record) for record in _records(Path(path).read_bytes())]


def rewind_event_files(directory: Path, step: int) -> int:
    """Rewrite each event file in `directory` keeping only the events at steps <= `step`
    (and dropping a torn last record); a file with nothing to drop is left untouched.
    Each file is replaced atomically. Returns the number of events dropped."""
    dropped = 0
    for path in event_files(directory):
        data = path.read_bytes()
        records = list(_records(data))
        kept = [r for r in records if Event.FromString(r).step <= step]
        framed = b"".join(map(_frame, kept))
        if framed != data:
            # No "tfevents" in the temporary name: TensorBoard's readers skip it.
            write_atomically(path, framed, tmp_name="rewinding.tmp")
        dropped += len(records) - len(kept)
    return dropped


def _records(data: bytes) -> Iterator[bytes]:
    offset = 0
    while offset + 12 <= len(data):
        header = data[offset:offset + 8]
        (length,) = struct.unpack("<Q", header)
        (header_crc,) = struct.unpack("<I", data[offset + 8:offset + 12])
        end = offset + 12 + length + 4
        if header_crc != masked_crc32c(header) or end > len(data):
            return
        record = data[offset + 12:end - 4]
        if struct.unpack("<I", data[end - 4:end])[0] != masked_crc32c(record):
            return
        yield record
        offset = end


def _frame(record: bytes) -> bytes:
    header = struct.pack("<Q", len(record))
    return (header + struct.pack("<I", masked_crc32c(header)) + record
            + struct.pack("<I", masked_crc32c(record)))
