"""Readable errors for wrong arguments (issue 33): "krc.compile: max_len must be an int, not
str ('7')" instead of pybind11's "incompatible function arguments" and its signature dump.

Two layers, both generic:
- `checked` wraps a Python function of the package and checks every argument against the
  function's own annotations before the call (so a wrong type never reaches the core, torch or
  a file), raising TypeError naming the function and the argument.
- `readable` wraps a function or method of the C++ core: when pybind11 refuses the arguments,
  it reads the signature pybind11 printed, finds the argument that does not fit (its type, or
  an integer the C++ type cannot hold) and raises TypeError or ValueError naming it.
"""

import functools
import inspect
import numbers
import os
import re
import typing
from typing import Any, Callable, Dict, List, Optional, Tuple

_INT_MAX = (1 << 31) - 1


def _type_name(value: Any) -> str:
    return type(value).__name__


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool) or type(value).__name__ == "bool_"  # numpy.bool_


def _matches(value: Any, hint: Any) -> bool:
    """Whether `value` fits the annotation `hint` (the forms krc's signatures use)."""
    if hint is Any or hint is inspect.Parameter.empty or hint is object:
        return True
    if isinstance(hint, (str, typing.ForwardRef)):
        text = hint if isinstance(hint, str) else hint.__forward_arg__
        if "PathLike" in text:
            return isinstance(value, os.PathLike)
        return type(value).__name__ == text.rsplit(".", 1)[-1]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union:
        return any(_matches(value, a) for a in args)
    if hint is type(None):
        return value is None
    if hint is bool:
        return _is_bool(value)
    if hint is int:
        return _is_int(value)
    if hint is float:
        return isinstance(value, numbers.Real) and not _is_bool(value)
    if hint is str:
        return isinstance(value, str)
    if origin is os.PathLike or hint is os.PathLike:
        return isinstance(value, os.PathLike)
    if origin is not None and getattr(origin, "__module__", "") == "collections.abc" and \
            origin.__name__ == "Callable" or hint is Callable:
        return callable(value)
    if origin in (list, tuple) or (origin is not None and origin.__name__ in
                                   ("Sequence", "Iterable")):
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            return False
        if not args or not isinstance(value, (list, tuple)):
            return True  # a generator is read once, by the callee
        return all(_matches(v, args[0]) for v in value)
    if isinstance(hint, type):
        return isinstance(value, hint)
    return True


def _describe(hint: Any) -> str:
    """An annotation in words: "an int", "a str or None", "a sequence of str"."""
    if isinstance(hint, (str, typing.ForwardRef)):
        text = hint if isinstance(hint, str) else hint.__forward_arg__
        if "PathLike" in text:
            return "a path (str or os.PathLike)"
        return "a krc." + text.rsplit(".", 1)[-1]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union:
        parts = [_describe(a) for a in args if a is not type(None)]
        if any("PathLike" in str(a) for a in args) and any(a is str for a in args):
            parts = ["a path (str or os.PathLike)"]
        text = " or ".join(dict.fromkeys(parts))
        return text + (" or None" if type(None) in args else "")
    if hint is bool:
        return "a bool (True or False)"
    if hint is int:
        return "an int"
    if hint is float:
        return "a number"
    if hint is str:
        return "a str"
    if origin is not None and origin.__name__ == "Callable" or hint is Callable:
        return "a callable"
    if origin in (list, tuple) or (origin is not None and origin.__name__ in
                                   ("Sequence", "Iterable")):
        return "a list of %s" % (_describe(args[0]).split(" ", 1)[-1] + "s" if args else "items")
    if isinstance(hint, type):
        prefix = "krc." if hint.__module__.startswith("krc") else ""
        return "a " + prefix + hint.__name__
    return str(hint).replace("typing.", "")


def refuse(function: str, name: str, value: Any, hint: Any) -> TypeError:
    return TypeError("%s: %s must be %s, not %s (%s)"
                     % (function, name, _describe(hint), _type_name(value), _shown(value)))


def checked(function: Callable) -> Callable:
    """`function` with every argument checked against its annotations first (TypeError naming
    the function and the argument). **options are passed on unchecked."""
    signature = inspect.signature(function)
    try:
        hints = typing.get_type_hints(function)
    except Exception:  # an annotation that does not resolve: the raw ones
        hints = {n: p.annotation for n, p in signature.parameters.items()}
    qualname = "krc." + function.__qualname__

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError("%s: %s" % (qualname, e)) from None
        for name, value in bound.arguments.items():
            p = signature.parameters[name]
            if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) or name == "self":
                continue
            hint = hints.get(name, p.annotation)
            if not _matches(value, hint):
                raise refuse(qualname, name, value, hint)
            if isinstance(value, (str, os.PathLike)) and "\0" in str(os.fspath(value)):
                # The C++ core would cut the name at the NUL byte (and write "a" for "a\0b").
                raise ValueError("%s: %s %s holds a NUL byte" % (qualname, name, _shown(value)))
        return function(*args, **kwargs)

    return wrapper


# ---- the C++ core: pybind11's refusal, read back


def _split_top(text: str, separator: str) -> List[str]:
    """`text` split at `separator` outside brackets and quotes."""
    parts, depth, start, quote = [], 0, 0, None
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c in "[(":
            depth += 1
        elif c in "])":
            depth -= 1
        elif depth == 0 and text.startswith(separator, i):
            parts.append(text[start:i])
            start = i + len(separator)
            i += len(separator) - 1
        i += 1
    parts.append(text[start:])
    return parts


def _pybind_parameters(message: str) -> List[Tuple[str, str]]:
    """[(name, type text)] of the first signature in pybind11's refusal."""
    match = re.search(r"^\s*1\. [^(]*\((.*)\)(?: -> .*)?$", message, re.M)
    if not match:
        return []
    out = []
    for part in _split_top(match.group(1), ", "):
        name, _, rest = part.partition(": ")
        out.append((name.strip(), _split_top(rest, " = ")[0].strip()))
    return out


def _fits(value: Any, text: str) -> bool:
    """Whether `value` has the Python type of pybind11's type text (not its range)."""
    alternatives = _split_top(text, " | ")
    if len(alternatives) > 1 and not all("Supports" in a for a in alternatives):
        return any(_fits(value, a) for a in alternatives)
    text = text.replace("typing.", "").replace("collections.abc.", "")
    if text == "None":
        return value is None
    if text.startswith("Optional["):
        return value is None or _fits(value, text[9:-1])
    match = re.fullmatch(r"(?:Sequence|list|List)\[(.*)\]", text)
    if match:
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            return False
        return all(_fits(v, match.group(1)) for v in value)
    if "SupportsInt" in text or text == "int":
        return _is_int(value)
    if "SupportsFloat" in text or text == "float":
        return isinstance(value, numbers.Real) and not _is_bool(value)
    if text == "bool":
        return _is_bool(value)
    if text == "str":
        return isinstance(value, str)
    if text == "bytes":
        return isinstance(value, (bytes, bytearray))
    if "Callable" in text:
        return callable(value)
    if text == "object":
        return True
    return type(value).__name__ == text.rsplit(".", 1)[-1]


def _out_of_range(value: Any) -> bool:
    """An integer (or one inside a list) that a C++ int may not hold: negative or past 2**31-1
    (pybind11 refuses a value its C++ type cannot hold as it refuses a wrong type)."""
    if _is_int(value):
        return not 0 <= value <= _INT_MAX
    if isinstance(value, (list, tuple)):
        return any(_out_of_range(v) for v in value)
    return False


def _words(text: str) -> str:
    text = text.replace("typing.", "").replace("collections.abc.", "").replace("krc._core.", "")
    text = re.sub(r"SupportsInt \| SupportsIndex", "int", text)
    text = re.sub(r"SupportsFloat \| SupportsIndex", "float", text)
    return text


def _rewrite(name: str, message: str, args: Tuple, kwargs: Dict[str, Any]) -> Optional[Exception]:
    parameters = _pybind_parameters(message)
    if not parameters:
        return None
    if parameters and parameters[0][0] == "self":
        parameters = parameters[1:]
    given = dict(zip([p for p, _ in parameters], args), **kwargs)
    types = dict(parameters)
    for parameter, text in parameters:
        if parameter in given and not _fits(given[parameter], text):
            value = given[parameter]
            return TypeError("%s: %s must be %s, not %s (%s)" % (
                name, parameter, _words(text), _type_name(value), _shown(value)))
    for parameter, text in parameters:
        if parameter in given and _out_of_range(given[parameter]):
            return ValueError("%s: %s %s is out of range (negative, or too large for it)"
                              % (name, parameter, _shown(given[parameter])))
    unknown = [k for k in kwargs if k not in types]
    if unknown:
        return TypeError("%s: no keyword %s" % (name, ", ".join(unknown)))
    return None


def readable(name: str, function: Callable, method: bool = False) -> Callable:
    """`function` (of the C++ core) raising a readable TypeError or ValueError, naming the
    argument, where pybind11 would dump its signatures."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except TypeError as e:
            text = str(e)
            if "incompatible function arguments" not in text and \
                    "incompatible constructor arguments" not in text:
                raise
            better = _rewrite(name, text, args[1:] if method else args, kwargs)
            if better is None:
                raise
            raise better from None

    return wrapper


def make_readable(module: Any, classes: List[type]) -> None:
    """Wraps every function of the core module and every method of `classes` with `readable`."""
    for key, value in list(vars(module).items()):
        if type(value).__name__ == "builtin_function_or_method" and not key.startswith("_"):
            setattr(module, key, readable("krc." + key, value))
    for cls in classes:
        for key, value in list(vars(cls).items()):
            if type(value).__name__ != "instancemethod" or (key.startswith("__") and
                                                              key != "__init__"):
                continue
            label = "krc.%s" % cls.__name__ if key == "__init__" else \
                "krc.%s.%s" % (cls.__name__, key)
            setattr(cls, key, readable(label, value, method=True))
