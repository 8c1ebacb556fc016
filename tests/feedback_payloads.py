"""A notebook whose markdown and outputs try to run script in its feedback page, beside the
honest content that must survive the cleaning (math, tables, images, code), and the page
nbgrader's feedback template makes of it with a given exporter."""

import base64
import struct
import zlib
from pathlib import Path

import nbformat
import nbgrader

# What every payload does when it runs: the title changes, a marker is written to the page.
TITLE = "feedback for tiny"
RUN = (
    "document.title='PWNED';"
    "document.body.insertAdjacentHTML('beforeend','<p class=pwned>PWNED</p>')"
)
RUN_NO_SPACE = "document.title='PWNED'"  # for an unquoted attribute


def png_base64(size: int = 4) -> str:
    """A real PNG, ``size`` pixels square, dark red, base64-encoded (what matplotlib gives)."""
    row = b"\x00" + b"\x90\x10\x10" * size
    chunks = [
        (b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)),
        (b"IDAT", zlib.compress(row * size)),
        (b"IEND", b""),
    ]
    body = b"".join(
        struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        for kind, data in chunks
    )
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + body).decode()


MATH = r"$$\frac{\partial L}{\partial w} = 2 x^{\top}$$ and inline $a<b$"
MARKDOWN_PAYLOADS = f"""## Student notes

{MATH}

| x | grad |
|---|------|
| 1 | 2 |

![dot](attachment:dot.png) ![inline](data:image/png;base64,{png_base64()})

[a markdown link](javascript:{RUN_NO_SPACE})

<script>{RUN}</script>
<img src="x" onerror="{RUN}">
<a href="javascript:{RUN}" id="jslink">a link</a>
<svg onload="{RUN}"><circle r="3"/></svg>
<iframe srcdoc="<script>parent.{RUN_NO_SPACE}</script>"></iframe>
<details open ontoggle="{RUN}"><summary>s</summary>d</details>
"""
HTML_OUTPUT = (
    f'<img src="x" onerror="{RUN}"><script>{RUN}</script>'
    '<table class="dataframe"><tr><th>loss</th></tr><tr><td>0.25</td></tr></table>'
)
SVG_OUTPUT = (
    f'<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20" onload="{RUN}">'
    f'<script>{RUN}</script><circle cx="10" cy="10" r="8"/></svg>'
)
SVG_HONEST = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20">'
    '<circle cx="10" cy="10" r="8" fill="teal"/></svg>'
)
CODE = "answer = 42  # the student's code, shown as written"


def payload_outputs() -> list[nbformat.NotebookNode]:
    """Outputs a student's code can display: HTML, JavaScript, SVG, markdown, PNGs."""
    display = nbformat.v4.new_output
    return [
        display("display_data", {"text/html": HTML_OUTPUT, "text/plain": "<table>"}),
        display("display_data", {"application/javascript": RUN}),
        display("display_data", {"image/svg+xml": SVG_OUTPUT}),
        display("display_data", {"text/markdown": f'<img src="y" onerror="{RUN}">'}),
        display(
            "display_data",
            {"image/png": "bm90IGEgcG5n"},
            metadata={"image/png": {"width": f"1 onerror={RUN_NO_SPACE}"}},
        ),
        display("display_data", {"image/png": png_base64(), "text/plain": "<Figure>"}),
        display("display_data", {"image/svg+xml": SVG_HONEST}),
    ]


def payload_code() -> str:
    """A code cell that displays every output of ``payload_outputs`` when it runs."""
    lines = [CODE, "from IPython.display import display"]
    for output in payload_outputs():
        data, metadata = dict(output.data), dict(output.metadata)
        lines.append(f"display({data!r}, raw=True, metadata={metadata!r})")
    return "\n".join(lines) + "\n"


def payload_notebook() -> nbformat.NotebookNode:
    """A notebook of every payload, in markdown, a raw HTML cell and a code cell's outputs."""
    markdown = nbformat.v4.new_markdown_cell(MARKDOWN_PAYLOADS)
    markdown.attachments = {"dot.png": {"image/png": png_base64()}}
    raw = nbformat.v4.new_raw_cell(f"<script>{RUN}</script>")
    raw.metadata["raw_mimetype"] = "text/html"
    code = nbformat.v4.new_code_cell(CODE)
    code.outputs = payload_outputs()
    return nbformat.v4.new_notebook(cells=[markdown, raw, code])


def render_page(notebook: nbformat.NotebookNode, exporter_class: type) -> str:
    """The page nbgrader's feedback template makes of ``notebook`` with ``exporter_class``,
    set up as ``generate_feedback`` sets it up."""
    nbgrader_dir = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader"
    css = nbgrader_dir / "static" / "node_modules" / "bootstrap" / "dist" / "css"
    exporter = exporter_class(
        template_name="feedback",
        extra_template_basedirs=[str(nbgrader_dir / "templates")],
        extra_template_paths=[str(css)],
    )
    resources = {"nbgrader": {"notebook": "tiny", "score": 1, "max_score": 1, "late_penalty": 0}}
    page, _ = exporter.from_notebook_node(notebook, resources)
    return page
