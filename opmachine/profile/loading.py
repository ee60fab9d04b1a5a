"""Finding and loading profiles: a shipped name from `opmachine/profiles/`, or a path to a `.toml` file."""
from __future__ import annotations

import importlib.resources
import tomllib
from pathlib import Path

from simdmodel.errors import InputError

from .cpu_profile import CPU_OPTIONAL_KEYS, CPU_TOP_KEYS, CPUProfile, parse_cpu
from .errors import ProfileError, ProfileKindError
from .gpu_profile import GPU_OPTIONAL_KEYS, GPU_TOP_KEYS, GPUProfile, parse_gpu
from .schema import NAME_RE, Checker, describe

__all__ = ["available_profiles", "load_profile", "parse_profile_bytes", "profiles_dir"]


def profiles_dir():
    """The folder of the shipped profiles (`opmachine/profiles/`), as an importlib resource."""
    return importlib.resources.files("opmachine").joinpath("profiles")


def available_profiles(kind: str | None = None) -> list[str]:
    """Names of the profiles shipped in `opmachine/profiles/`, sorted; only those of `kind` if given."""
    kind = _check_kind(kind)
    names = sorted(entry.name[:-5] for entry in profiles_dir().iterdir()
                   if entry.name.endswith(".toml") and entry.is_file())
    if kind is None:
        return names
    return [name for name in names if _kind_of(load_profile(name)) == kind]


def load_profile(name_or_path, kind: str | None = None) -> GPUProfile | CPUProfile:
    """Load a profile: a bare name from the shipped `profiles/`, or a path to a `.toml` file.

    `kind` ("gpu" or "cpu") requires that kind of profile. Every key is checked; any problem
    raises ProfileError with one line naming the profile and the key.
    """
    kind = _check_kind(kind)
    if isinstance(name_or_path, Path):
        name_or_path = str(name_or_path)
    if not isinstance(name_or_path, str) or not name_or_path:
        raise InputError(f"profile must be a name or a path to a .toml file, got {name_or_path!r}")
    if name_or_path.endswith(".toml") or "/" in name_or_path or "\\" in name_or_path:
        label = name_or_path
        path = Path(name_or_path)
        if path.suffix != ".toml":
            raise ProfileError(label, "a profile file must end in .toml")
        if not path.exists():
            raise ProfileError(label, "no such file")
        if path.is_dir():
            raise ProfileError(label, "is a directory")
        try:
            data = path.read_bytes()
        except OSError as error:
            raise ProfileError(label, f"cannot read: {error.strerror or error}") from None
        where = str(path)
    else:
        label = name_or_path
        resource = profiles_dir().joinpath(f"{name_or_path}.toml")
        if not NAME_RE.match(name_or_path) or not resource.is_file():
            names = ", ".join(available_profiles()) or "none"
            raise ProfileError(label, f"no such profile (available: {names})")
        data = resource.read_bytes()
        where = str(resource)
    profile = parse_profile_bytes(data, label, where)
    if kind is not None and _kind_of(profile) != kind:
        raise ProfileKindError(profile.name, _kind_of(profile), kind)
    return profile


def _check_kind(kind):
    if kind not in (None, "gpu", "cpu"):
        raise InputError(f"profile kind must be 'gpu' or 'cpu', got {kind!r}")
    return kind


def _kind_of(profile) -> str:
    return "gpu" if isinstance(profile, GPUProfile) else "cpu"


def parse_profile_bytes(data: bytes, label: str, where: str) -> GPUProfile | CPUProfile:
    """Parse and validate profile file contents; `label` names it in errors, `where` is its path."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ProfileError(label, f"not UTF-8 text (byte {error.start})") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ProfileError(label, f"TOML syntax error: {error}") from None
    except (ValueError, RecursionError) as error:  # e.g. an integer literal too long for int()
        raise ProfileError(label, f"TOML syntax error: {type(error).__name__}: {error}") from None
    return _parse_doc(doc, label, where)


def _parse_doc(doc: dict, label: str, where: str) -> GPUProfile | CPUProfile:
    check = Checker(label)
    if "kind" not in doc:
        check.fail("kind", "missing key (kind = \"gpu\" or \"cpu\")")
    kind = doc["kind"]
    if kind not in ("gpu", "cpu"):
        check.fail("kind", f"must be \"gpu\" or \"cpu\", got {describe(kind)}")
    if kind == "gpu":
        check.keys(doc, "", GPU_TOP_KEYS, GPU_OPTIONAL_KEYS)
    else:
        check.keys(doc, "", CPU_TOP_KEYS, CPU_OPTIONAL_KEYS)
    name = check.string(doc["name"], "name")
    if not NAME_RE.match(name):
        check.fail("name", f"must be letters, digits, '_', '.', '+' or '-', got {name!r}")
    description = check.string(doc["description"], "description")
    check.table(doc["hardware"], "hardware")
    check.table(doc["service"], "service")
    if kind == "gpu":
        return parse_gpu(check, doc, name, description, where)
    return parse_cpu(check, doc, name, description, where)
