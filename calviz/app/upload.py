"""The served dashboard's file upload: the size limit is checked in the browser, and a file is sent in
pieces, so no upload can exceed the server's websocket message limit.

Panel's ``FileInput`` sends the whole file, base64-encoded, in one websocket message: under
``panel serve`` (Bokeh's default limit of 20 MB per message) a file above ~15 MB closes the session
without a word.  :class:`UploadInput` instead refuses a file above ``max_bytes`` before reading it (the
app shows why) and sends an accepted file in pieces of ``chunk_bytes``.
"""

from __future__ import annotations

import base64
from collections.abc import Callable

import param
from panel.custom import JSComponent

__all__ = ["UploadInput"]

#: bytes per piece: base64 makes it 4/3 larger, still far below Bokeh's default 20 MB message limit
CHUNK_BYTES = 3 * 1024 * 1024


class UploadInput(JSComponent):
    """A file chooser.  ``on_file(content: bytes, filename: str)`` receives an accepted file;
    ``on_refused(filename: str, size: int)`` a file above ``max_bytes`` (never sent).  Choosing the same
    file again loads it again (e.g. after fixing the column boxes)."""

    accept = param.String(default="", doc="file types offered by the browser's dialog")
    max_bytes = param.Integer(default=0, bounds=(0, None), doc="largest file accepted")
    chunk_bytes = param.Integer(default=CHUNK_BYTES, bounds=(1, None), doc="bytes per message")

    _esm = """
    function base64(blob) {
      return new Promise((resolve, reject) => {
        const reader = new FileReader()
        reader.onload = () => resolve(reader.result.slice(reader.result.indexOf(",") + 1))
        reader.onerror = () => reject(reader.error)
        reader.readAsDataURL(blob)
      })
    }

    export function render({ model, el }) {
      const input = document.createElement("input")
      input.type = "file"
      input.accept = model.accept
      input.style.width = "100%"
      input.addEventListener("change", async () => {
        const file = input.files[0]
        input.value = ""  // the same file can be chosen again
        if (!file) return
        if (file.size > model.max_bytes) {
          model.send_msg({kind: "refused", filename: file.name, size: file.size})
          return
        }
        model.send_msg({kind: "start", filename: file.name, size: file.size})
        for (let start = 0; start < file.size; start += model.chunk_bytes)
          model.send_msg({kind: "chunk", data: await base64(file.slice(start, start + model.chunk_bytes))})
        model.send_msg({kind: "end"})
      })
      el.appendChild(input)
    }
    """

    def __init__(
        self,
        *,
        on_file: Callable[[bytes, str], None],
        on_refused: Callable[[str, int], None],
        **params,
    ):
        super().__init__(**params)
        self._on_file, self._on_refused = on_file, on_refused
        self._filename: str | None = None
        self._parts: list[bytes] = []
        self._received = 0

    def _handle_msg(self, msg) -> None:
        kind = msg.get("kind") if isinstance(msg, dict) else None
        if kind == "refused":
            self._on_refused(str(msg.get("filename", "upload")), int(msg.get("size", 0)))
        elif kind == "start":
            self._filename, self._parts, self._received = str(msg.get("filename") or "upload"), [], 0
        elif kind == "chunk" and self._filename is not None:
            part = base64.b64decode(msg.get("data", ""))
            self._received += len(part)
            if self._received > self.max_bytes:  # a client that ignores the limit: refused here too
                self._on_refused(self._filename, self._received)
                self._filename, self._parts = None, []
                return
            self._parts.append(part)
        elif kind == "end" and self._filename is not None:
            content, filename = b"".join(self._parts), self._filename
            self._filename, self._parts = None, []
            self._on_file(content, filename)
