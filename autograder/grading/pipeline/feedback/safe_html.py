"""The one HTML sanitiser of student markup shown to people: nh3 (the Rust ammonia
sanitiser), never a regular expression. Feedback pages run it over what a student typed
or displayed (markdown, HTML outputs), so a page opened by the student, a TA or the
instructor runs no script of the student's.

nh3 parses as a browser does and keeps only an allow-list: no ``<script>``, ``<style>``,
``<iframe>`` or ``<svg>`` element, no ``on*=`` handler, no ``style`` attribute (CSS can load
URLs), and URLs only with safe schemes; ``data:`` only as an image's ``src`` (what markdown
attachments become), where a browser runs nothing, not even an SVG's scripts.
"""

import re

import nh3

# data: URLs allowed: an <img>'s source of a raster or SVG image (an <img> runs no script).
_IMAGE_DATA_URL = re.compile(r"^data:image/(png|jpeg|gif|webp|svg\+xml)[;,]", re.IGNORECASE)

_TAGS = nh3.ALLOWED_TAGS - {"map", "area"}  # image maps only add link targets
_ATTRIBUTES = {tag: set(names) for tag, names in nh3.ALLOWED_ATTRIBUTES.items()}
_ATTRIBUTES["*"] = {"class", "title", "lang", "dir"}
_ATTRIBUTES["img"] = _ATTRIBUTES["img"] | {"title"}
for _heading in ("h1", "h2", "h3", "h4", "h5", "h6"):
    _ATTRIBUTES[_heading] = {"id"}  # nbconvert's heading anchors link to these
_URL_SCHEMES = nh3.ALLOWED_URL_SCHEMES | {"data"}


def _keep_attribute(tag: str, attribute: str, value: str) -> str | None:
    """Drop a ``data:`` URL anywhere but an image's source, and a non-image one there."""
    if value.strip().lower().startswith("data:"):
        if tag == "img" and attribute == "src" and _IMAGE_DATA_URL.match(value.strip()):
            return value
        return None
    return value


def clean_html(fragment: str) -> str:
    """``fragment`` with everything that can run script or load a page removed."""
    return nh3.clean(
        fragment,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes=_URL_SCHEMES,
        attribute_filter=_keep_attribute,
        strip_comments=True,
    )
