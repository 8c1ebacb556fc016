"""A grading report page read as a browser would: its tables' rows per section."""

from html.parser import HTMLParser


class Page(HTMLParser):
    """What a browser would build: text, table rows per section, images, script count."""

    def __init__(self, text):
        super().__init__()
        self.section = ""
        self.rows: dict[str, list[list[str]]] = {}
        self.images: list[str] = []
        self.scripts = 0
        self.text: list[str] = []
        self._heading = False
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        if tag == "h2":
            self._heading, self.section = True, ""
        elif tag == "tr":
            self._row = []
        elif tag == "td":
            self._cell = []
        elif tag == "img":
            self.images.append(dict(attrs)["src"])
        elif tag == "script":
            self.scripts += 1

    def handle_endtag(self, tag):
        if tag == "h2":
            self._heading = False
        elif tag == "td":
            self._row.append("".join(self._cell))
            self._cell = None
        elif tag == "tr" and self._row:
            self.rows.setdefault(self.section, []).append(self._row)

    def handle_data(self, data):
        self.text.append(data)
        if self._heading:
            self.section += data
        if self._cell is not None:
            self._cell.append(data)

    @property
    def visible(self) -> str:
        return "".join(self.text)
