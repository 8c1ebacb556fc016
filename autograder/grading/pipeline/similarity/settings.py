"""The similarity comparison's settings, in a module of their own: the command line reads
their defaults for its help without importing copydetect and nbformat."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    """The comparison's knobs; the defaults are the command line's."""

    noise: int = 25  # k-gram length in filtered characters: shorter matches never count
    guarantee: int = 30  # a match this long is always found (winnowing window = g - k + 1)
    threshold: float = 0.75  # flag a pair whose score reaches this
    min_overlap: int = 100  # ...and whose shared code is at least this many filtered chars
    structure_threshold: float = 0.6  # or whose expression shapes' score reaches this
    min_shapes: int = 10  # ...over at least this many shared expression shapes
    top: int = 20  # pairs shown side by side in the HTML page
    detail: int = 500  # pairs, highest first, whose shared regions are located
    floor: float = 0.2  # pairs scoring below this are left out of pairs.json
