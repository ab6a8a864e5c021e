"""Distributed checkpoints: `save_state_dict(state, path)` and `load_state_dict(path, like)` (Paddle's
names), on orbax-checkpoint.

Each process writes only its own shards (orbax writes one zarr array per leaf; a process writes
the chunks of the shards its devices hold, one replica each), so nothing is gathered to one host.
On load every leaf is read straight into the layout of the matching leaf of `like` (a jax.Array's
sharding, or a ShapeDtypeStruct's): another mesh or other placements reshard on load, and each
process reads only the slices its devices need.

A save is atomic. `path` is a folder holding one committed checkpoint and a small JSON record,
`CHECKPOINT`, that names it (with every leaf's path, shape and dtype, and the size of every file):

    path/CHECKPOINT          {"format": "spmdkit-checkpoint", "directory": "state-000003", "leaves": ..., "files": ...}
    path/state-000003/       orbax's PyTree checkpoint of the leaves

A save writes a new `state-N` folder beside the committed one and then replaces `CHECKPOINT` with
one rename (atomic on POSIX file systems), so a process killed at any moment of a save leaves the
previous record and the folder it names untouched. Folders of saves that did not commit are
removed by the next save.

Leaves are matched by their pytree key path (`['m']['h0.w_qkv']`), so the state may be any pytree
(dicts, lists, dataclasses, registered nodes) and `like` may be another pytree type with the same
paths. A leaf of `like` missing from the checkpoint, of another shape or dtype, files truncated or
gone, a folder that is no checkpoint: `CheckpointError` naming the leaf path.
"""
from __future__ import annotations

import atexit
import contextlib
import itertools
import json
import logging
import os
import re
import shutil
import threading
from pathlib import Path

import numpy as np

from ..ir.jax_keys import is_key, key_data_shape, key_impl
from .errors import DistError
from .static_args import is_traced

FORMAT = "spmdkit-checkpoint"
VERSION = 1
RECORD = "CHECKPOINT"
_STATE_DIR = re.compile(r"state-(\d+)$")
_barriers = itertools.count()


class CheckpointError(DistError):
    """A checkpoint that cannot be saved or loaded as asked: not a checkpoint, a leaf missing or
    of another shape or dtype, data files truncated or missing. `value` names the leaf path."""


# ----------------------------------------------------------------------------- the leaves


def _key_text(key) -> str:
    import jax
    return jax.tree_util.keystr((key,))


def _flatten(tree, what: str) -> tuple[list[str], list, object]:
    """Key paths (as `jax.tree_util.keystr`), leaves and treedef of a pytree."""
    import jax
    with_paths, treedef = jax.tree_util.tree_flatten_with_path(tree)
    paths = [jax.tree_util.keystr(p) for p, _ in with_paths]
    if len(set(paths)) != len(paths):
        dup = next(p for p in paths if paths.count(p) > 1)
        raise CheckpointError(f"{what} has two leaves at the same key path", value=dup or "<root>")
    return paths, [leaf for _, leaf in with_paths], treedef


def _stored_names(paths: list[str]) -> list[str]:
    """A file-system-safe, unique folder name per leaf (orbax names each leaf's folder by its key)."""
    names = []
    for i, p in enumerate(paths):
        readable = re.sub(r"[^A-Za-z0-9_.-]+", "_", p).strip("_.") or "leaf"
        names.append(f"{i:05d}.{readable[:80]}")
    return names


def _as_array(leaf, path: str):
    """A leaf to save: a jax.Array as it is (each process writes its own shards; a PRNG key array
    as its uint32 key data, laid out alike), anything else (numpy arrays, Python numbers) as a
    host numpy array written by the primary process."""
    import jax
    if isinstance(leaf, jax.Array):
        return jax.random.key_data(leaf) if is_key(leaf) else leaf
    try:
        out = np.asarray(leaf)
    except Exception as e:  # noqa: BLE001 - the leaf's own conversion error, with its path
        raise CheckpointError(f"cannot save a leaf of type {type(leaf).__name__} ({e})", value=path) from None
    if out.dtype == object:
        raise CheckpointError(f"cannot save a leaf of type {type(leaf).__name__}: not an array", value=path)
    return out


# ----------------------------------------------------------------------------- processes


def _process_index() -> int:
    import jax
    return jax.process_index()


def _barrier(what: str) -> None:
    """All processes reach this point before any goes on (a no-op in one process)."""
    import jax
    if jax.process_count() > 1:
        from jax.experimental import multihost_utils
        multihost_utils.sync_global_devices(f"spmdkit-checkpoint-{what}-{next(_barriers)}")


def _write_atomically(file: Path, text: str) -> None:
    tmp = file.with_name(f".{file.name}.tmp-{os.getpid()}")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, file)
    fd = os.open(file.parent, os.O_RDONLY)
    try:
        os.fsync(fd)    # the rename itself reaches the disk
    finally:
        os.close(fd)


def _file_sizes(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_size for p in sorted(folder.rglob("*")) if p.is_file()}


# ----------------------------------------------------------------------------- save


def read_record(path) -> dict:
    """The commit record of the checkpoint in `path` (CheckpointError when there is none)."""
    path = Path(path)
    file = path / RECORD
    if not file.is_file():
        if _STATE_DIR.search(path.name) and (path.parent / RECORD).is_file():  # what save_state_dict returned
            raise CheckpointError(f"{path} is the data folder of the checkpoint in {path.parent}: load that folder "
                                  f"(the path given to save_state_dict)")
        raise CheckpointError(f"{path} is not a checkpoint (no {RECORD} record in it)")
    try:
        record = json.loads(file.read_text())
    except (OSError, ValueError) as e:
        raise CheckpointError(f"{path} is not a checkpoint: its {RECORD} record is unreadable ({e})") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT or not isinstance(record.get("leaves"), dict) \
            or not isinstance(record.get("files"), dict) or not _STATE_DIR.match(str(record.get("directory"))):
        raise CheckpointError(f"{path} is not a checkpoint: its {RECORD} record is not a {FORMAT} record")
    if record.get("version") != VERSION:
        raise CheckpointError(f"{path}: checkpoint format version {record.get('version')} (this spmdkit reads "
                              f"{VERSION})")
    return record


def _checkpointer():
    import jax
    import orbax.checkpoint as ocp
    th = ocp.type_handlers
    # Leaves are jax.Arrays or numpy arrays (_as_array). Replicas do not split the writing of a
    # replicated array among themselves: that slices every array once per shape on device, and
    # compiling those slices made a first save ~20x slower than the writing itself.
    registry = th.create_type_handler_registry((np.ndarray, th.NumpyHandler()),
                                               (jax.Array, th.ArrayHandler(use_replica_parallel=False)))
    # no OCDBT: one zarr array per leaf, so a damaged file points at its leaf
    return ocp.Checkpointer(ocp.PyTreeCheckpointHandler(use_ocdbt=False, type_handler_registry=registry))


def save_state_dict(state, path) -> Path:
    """Save the pytree `state` (jax.Arrays, numpy arrays, numbers) to the folder `path`; every
    process calls it with its part of the same global state. Leaves that are neither arrays nor
    numbers (an equinox module's functions) are not saved: a load takes them from its `like`.
    Replaces a checkpoint already in `path` atomically. Returns the folder that holds the new
    data (load_state_dict reads `path`)."""
    import orbax.checkpoint as ocp
    path = Path(path).absolute()
    paths, leaves, _ = _flatten(state, "state")
    # leaves that are no data (an equinox module's functions, a name): not saved; a load takes
    # them from its `like`, as eqx.tree_serialise_leaves does
    skipped = [p for p, leaf in zip(paths, leaves) if not is_traced(leaf)]
    data = [k for k, leaf in enumerate(leaves) if is_traced(leaf)]
    paths, leaves = [paths[k] for k in data], [leaves[k] for k in data]
    arrays = [_as_array(leaf, p) for p, leaf in zip(paths, leaves)]
    names = _stored_names(paths)
    primary = _process_index() == 0
    previous = None
    if (path / RECORD).exists():
        previous = read_record(path)["directory"]
    elif path.exists() and not all(_is_ours(p.name) for p in path.iterdir()):
        raise CheckpointError(f"{path} is a folder with other files in it, not a checkpoint: refusing to write there")
    # every process names the same folder (from the record, which no process changes before the
    # barrier); a folder of a killed save by that name is removed by the primary first
    new = f"state-{int(_STATE_DIR.match(previous).group(1)) + 1 if previous else 1:06d}"
    if primary:
        path.mkdir(parents=True, exist_ok=True)
        _remove_uncommitted(path, keep=previous)
    _barrier("start")
    _pause_for_tests("write")
    with _quiet_orbax():
        if arrays:
            _checkpointer().save(path / new, args=ocp.args.PyTreeSave(dict(zip(names, arrays))))
        elif primary:  # nothing but skipped leaves: an empty data folder (orbax refuses an empty tree)
            (path / new).mkdir()
    _barrier("written")
    if primary:
        leaves_record = {p: _leaf_record(n, leaf, a) for p, n, leaf, a in zip(paths, names, leaves, arrays)}
        record = {"format": FORMAT, "version": VERSION, "directory": new, "leaves": leaves_record,
                  "skipped": skipped, "files": _file_sizes(path / new)}
        _pause_for_tests("commit")
        _write_atomically(path / RECORD, json.dumps(record, indent=1))
        _remove_uncommitted(path, keep=new, wait=False)
    _barrier("committed")
    return path / new


def _leaf_record(name: str, leaf, array) -> dict:
    """What the record says of a leaf: its shape and dtype as the state had it (a key array's
    `key<fry>` and its implementation, whose uint32 data the files hold)."""
    if is_key(leaf):
        return {"name": name, "shape": list(leaf.shape), "dtype": str(leaf.dtype), "key_impl": key_impl(leaf).name}
    return {"name": name, "shape": list(array.shape), "dtype": np.dtype(array.dtype).name}


class _DropOcdbtNote(logging.Filter):
    """Orbax warns on every save without OCDBT that it found no OCDBT parts to merge: true, and
    what we asked for."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Skipping merge of OCDBT checkpoints" not in record.getMessage()


@contextlib.contextmanager
def _quiet_orbax():
    log, note = logging.getLogger("absl"), _DropOcdbtNote()
    log.addFilter(note)
    try:
        yield
    finally:
        log.removeFilter(note)


def _is_ours(name: str) -> bool:
    """A file or folder a save puts in `path` (the record, its temporary, state folders and
    orbax's temporary ones)."""
    return name == RECORD or name.startswith(f".{RECORD}.tmp-") or bool(_STATE_DIR.match(name.split(".")[0]))


def _remove_uncommitted(path: Path, keep: str | None, wait: bool = True) -> None:
    """Folders of earlier or killed saves (orbax's temporary ones too), all but `keep`. With
    wait=False they are renamed out of the way at once and deleted by a background thread:
    unlinking a state's files took most of a small save's time. What the thread does not finish
    (the process ends) the next save removes."""
    doomed = []
    for p in path.iterdir():
        if p.name != keep and p.is_dir() and _STATE_DIR.match(p.name.split(".")[0]):
            doomed.append(p)
        elif p.name.startswith(f".{RECORD}.tmp-"):
            p.unlink(missing_ok=True)
    if wait:
        for p in doomed:
            shutil.rmtree(p, ignore_errors=True)
        return
    gone = []
    for p in doomed:
        try:
            gone.append(p.rename(p.with_name(p.name.split(".")[0] + ".removing")))
        except OSError:
            gone.append(p)
    thread = threading.Thread(target=lambda: [shutil.rmtree(p, ignore_errors=True) for p in gone], daemon=True,
                              name="spmdkit-checkpoint-cleanup")
    thread.start()
    _cleanups.append(thread)


_cleanups: list[threading.Thread] = []


@atexit.register
def wait_for_cleanup() -> None:
    """Wait until the folders of replaced checkpoints are deleted (also at exit)."""
    while _cleanups:
        _cleanups.pop().join()


def _pause_for_tests(stage: str) -> None:
    """SPMDKIT_CHECKPOINT_PAUSE=stage: print a line and wait there (a test kills the process
    mid-save: "write" before any data, "commit" after all of it, before the record)."""
    if os.environ.get("SPMDKIT_CHECKPOINT_PAUSE") == stage:
        import time
        print(f"checkpoint paused at {stage}", flush=True)
        while True:
            time.sleep(60)


# ----------------------------------------------------------------------------- load


def _target(leaf, path: str):
    """(shape, dtype, sharding or None) that `like`'s leaf asks for."""
    import jax
    if isinstance(leaf, (jax.Array, jax.ShapeDtypeStruct)):
        return tuple(leaf.shape), leaf.dtype if is_key(leaf) else np.dtype(leaf.dtype), getattr(leaf, "sharding", None)
    if isinstance(leaf, (np.ndarray, np.generic, int, float, complex, bool)):
        a = np.asarray(leaf)
        return a.shape, a.dtype, None
    raise CheckpointError(f"like's leaf is a {type(leaf).__name__}; expected a jax.Array, a jax.ShapeDtypeStruct "
                          "(with a sharding to load onto devices) or a numpy array", value=path)


def _files_by_leaf(record: dict) -> dict[str, list[tuple[str, int]]]:
    out: dict[str, list[tuple[str, int]]] = {}
    for rel, size in record["files"].items():
        out.setdefault(rel.split("/")[0], []).append((rel, size))
    return out


def _check_files(folder: Path, files: list[tuple[str, int]], path: str) -> None:
    """The leaf's files are all there with the sizes they were written with (a truncated or
    deleted chunk would otherwise read back as fill values)."""
    for rel, size in files:
        f = folder / rel
        if not f.is_file():
            raise CheckpointError(f"data file {rel} of the checkpoint in {folder.parent} is missing", value=path)
        if f.stat().st_size != size:
            raise CheckpointError(f"data file {rel} of the checkpoint in {folder.parent} is {f.stat().st_size} "
                                  f"bytes, written as {size} (truncated or overwritten)", value=path)


def load_state_dict(path, like):
    """The checkpoint in the folder `path` as a pytree of `like`'s structure: each leaf laid out
    as the matching leaf of `like` (a jax.Array: its sharding; a jax.ShapeDtypeStruct: its
    sharding, or a numpy array when it has none; a numpy array: a numpy array). Leaves match by
    key path; leaves of the checkpoint that `like` does not name are not read."""
    import jax
    import orbax.checkpoint as ocp
    path = Path(path).absolute()
    record = read_record(path)
    folder = path / record["directory"]
    paths, leaves, treedef = _flatten(like, "like")
    files = _files_by_leaf(record)
    items, restore_args, names, impls, kept = {}, {}, [], {}, {}
    for k, (p, leaf) in enumerate(zip(paths, leaves)):
        if not is_traced(leaf) and p not in record["leaves"]:  # no data (a function, a name): like's own,
            kept[k] = leaf                                       # as save skipped it
            continue
        shape, dtype, sharding = _target(leaf, p)
        saved = record["leaves"].get(p)
        if saved is None:
            near = [q for q in record["leaves"] if q.rsplit("[", 1)[-1] == p.rsplit("[", 1)[-1]]
            raise CheckpointError("not in the checkpoint" + (f" (it has {near[:3]})" if near else
                                                             f" ({len(record['leaves'])} leaves in it)"), value=p)
        if tuple(saved["shape"]) != shape:
            raise CheckpointError(f"the checkpoint holds shape {saved['shape']}, like asks for {list(shape)}", value=p)
        if saved["dtype"] != _dtype_name(dtype):
            raise CheckpointError(f"the checkpoint holds dtype {saved['dtype']}, like asks for {_dtype_name(dtype)} "
                                  "(load with the saved dtype and cast)", value=p)
        _check_files(folder, files.get(saved["name"], []), p)
        name = saved["name"]
        names.append(name)
        if is_key(leaf):  # its uint32 data is read, laid out as the key array (the data dims whole)
            impls[name] = saved.get("key_impl") or key_impl(leaf).name
            shape, dtype = key_data_shape(leaf), np.dtype(np.uint32)
        if sharding is None:
            items[name] = np.zeros((), dtype)   # a placeholder: only its type matters
            restore_args[name] = ocp.RestoreArgs(restore_type=np.ndarray, dtype=dtype)
        else:
            items[name] = jax.ShapeDtypeStruct(shape, dtype, sharding=sharding)
            restore_args[name] = ocp.ArrayRestoreArgs(sharding=sharding, global_shape=shape, dtype=dtype)
    try:
        restored = _checkpointer().restore(folder, args=ocp.args.PyTreeRestore(
            item=items, restore_args=restore_args, partial_restore=True)) if items else {}
    except Exception as e:  # noqa: BLE001 - orbax/tensorstore raise many kinds; find the leaf to blame
        raise _blame(folder, items, restore_args, dict(zip(names, paths)), e) from e
    read = iter([restored[n] if n not in impls else jax.random.wrap_key_data(restored[n], impl=impls[n])
                 for n in names])
    return jax.tree_util.tree_unflatten(treedef, [kept[k] if k in kept else next(read) for k in range(len(leaves))])


def _dtype_name(dtype) -> str:
    return dtype.name if isinstance(dtype, np.dtype) else str(dtype)  # a key dtype: key<fry>


def _blame(folder, items, restore_args, path_of, error) -> CheckpointError:
    """A CheckpointError naming the first leaf that fails to read alone (the whole tree failed)."""
    import orbax.checkpoint as ocp
    for name in items:
        try:
            _checkpointer().restore(folder, args=ocp.args.PyTreeRestore(
                item={name: items[name]}, restore_args={name: restore_args[name]}, partial_restore=True))
        except Exception as e:  # noqa: BLE001
            return CheckpointError(f"cannot read it from {folder}: {type(e).__name__}: {str(e)[:300]}",
                                   value=path_of[name])
    return CheckpointError(f"cannot read {folder}: {type(error).__name__}: {str(error)[:300]}")
