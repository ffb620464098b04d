"""What a weights file is certified for, and a warning when a framework is asked for another
format (issue 33): the file's `compiler` metadata says, for each of fp32, bf16 and fp16, up to
which length krc proved the network exact in that format (`precision.exact_in`, the numbers
`krc info` prints). A network compiled for fp32 cast to bfloat16 gives wrong states without a
word otherwise (a kr network: 256 of 380 positions wrong)."""

import json
import warnings

FORMATS = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}


class UncertifiedFormatWarning(UserWarning):
    """The network is run in a format (or at a length) its file does not certify."""


def certified_lengths(metadata):
    """{format: longest certified length or None} from a file's metadata; None when the file
    does not say (older files)."""
    try:
        return dict(json.loads(metadata["compiler"])["precision"]["exact_in"])
    except (KeyError, TypeError, ValueError):
        return None


def certification_text(lengths):
    parts = ["%s up to length %d" % (f, n) for f, n in lengths.items() if n]
    return ", ".join(parts) if parts else "no format"


def warn_if_uncertified(metadata, dtype_name, where, stacklevel=3):
    """Warns (UncertifiedFormatWarning) when `dtype_name` ("float32", "bfloat16", "float16")
    is not a format the file certifies; `where` names the file or network. Returns whether it
    warned."""
    lengths = certified_lengths(metadata)
    fmt = FORMATS.get(dtype_name)
    if lengths is None or fmt is None or lengths.get(fmt):
        return False
    warnings.warn(
        "%s is not certified in %s (it is exact in: %s); its answers there may be wrong. "
        "Compile it with precision=%r (krc compile --precision %s) for a network exact in %s."
        % (where, fmt, certification_text(lengths), fmt, fmt, dtype_name),
        UncertifiedFormatWarning, stacklevel=stacklevel)
    return True
