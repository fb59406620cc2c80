"""Help text of the command line: field docstrings shown as paragraphs that the terminal
wraps, through tyro's public constructor registry.

tyro keeps every line break of a field docstring whose lines are indented in the source
(all of ours) and then wraps each line again, leaving a short broken line wherever a source
line ended. `help_registry` gives our dataclasses' fields their docstrings as `help_text`
makes them, and leaves everything else to tyro's own rules.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import textwrap

from tyro.constructors import ConstructorRegistry, StructConstructorSpec, StructTypeInfo

PACKAGE = "modular_ppo"


def help_text(docstring: str) -> str:
    """A docstring as help text: the lines of each paragraph joined into one (the terminal
    wraps it); blank lines, "- " / "* " items and indented lines (examples) keep their line
    breaks."""
    items = ("- ", "* ")
    lines: list[str] = []
    for line in inspect.cleandoc(docstring).splitlines():
        line = line.rstrip()
        previous = lines[-1] if lines else ""
        continues_item = previous.startswith(items) and line.startswith("  ") \
            and not line.startswith("   ")
        joins = continues_item or (previous and line and not line[0].isspace()
                                   and not previous[0].isspace() and not line.startswith(items))
        if joins:
            lines[-1] += " " + line.strip()
        elif line or (lines and lines[-1]):
            lines.append(line)
    return "\n".join(lines).strip()


@functools.cache
def field_docstrings(cls: type) -> dict[str, str]:
    """Field name -> the string literal right below the field in the class body, for `cls`
    and its base classes (the nearest class's wins)."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not klass.__module__.startswith(PACKAGE):
            continue
        body = ast.parse(textwrap.dedent(inspect.getsource(klass))).body[0].body
        for field, after in zip(body, body[1:]):
            if (isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)
                    and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)):
                docs[field.target.id] = after.value.value
    return docs


def help_registry() -> ConstructorRegistry:
    """A registry (for `tyro.cli(..., registry=)`) whose rule builds our dataclasses as
    tyro's own rules do, with every field's help from `help_text` of its docstring."""
    registry = ConstructorRegistry()
    delegating: set[type] = set()

    @registry.struct_rule
    def with_help_text(info: StructTypeInfo) -> StructConstructorSpec | None:
        cls = info.type
        if (not dataclasses.is_dataclass(cls) or not isinstance(cls, type)
                or not cls.__module__.startswith(PACKAGE) or cls in delegating):
            return None
        delegating.add(cls)  # the spec of tyro's own rules, this rule skipped
        try:
            spec = ConstructorRegistry.get_struct_spec(info)
        finally:
            delegating.discard(cls)
        if not isinstance(spec, StructConstructorSpec):
            return spec
        docs = field_docstrings(cls)
        return dataclasses.replace(spec, fields=tuple(
            dataclasses.replace(field, helptext=help_text(docs[field.name]))
            if field.name in docs and not isinstance(field.helptext, str) else field
            for field in spec.fields))

    return registry
