"""The dashboard's texts: captions, headings, notes and status lines as HTML in plain Bokeh ``Div`` models."""

from __future__ import annotations

import html

import panel as pn
from bokeh.models import Div

__all__ = ["TEXTS_IN_PLACE_JS", "Text", "alert", "heading"]


class Text:
    """A caption, heading, note or status line: HTML in a Bokeh ``Div`` (in a Panel pane, see
    ``__panel__``).  A new text is one small property patch; a Panel Markdown pane would render Markdown on
    the server and re-render the pane in the browser on every change — and any Panel Markdown, HTML or
    Alert pane in a served page makes it load MathJax (1.8 MB of JavaScript the browser parses before it
    draws anything), which no text here needs.  ``object`` is the HTML shown.  On a served page a new text
    is written into the Div in place (:data:`TEXTS_IN_PLACE_JS`)."""

    def __init__(self, text: str = "", *, styles: dict | None = None, margin=(0, 10), visible: bool = True,
                 **kwargs):
        self.div = Div(text=text, sizing_mode="stretch_width", styles={"font-size": "12px", **(styles or {})},
                       visible=visible, **kwargs)
        self.pane = pn.pane.Bokeh(self.div, sizing_mode="stretch_width", margin=margin)

    @property
    def object(self) -> str:
        return self.div.text

    @object.setter
    def object(self, text: str) -> None:
        if self.div.text != text:  # every set is a message to the browser
            self.div.text = text

    # the Div's own flag: Panel 1.9 fails to sync a Bokeh pane's ``visible`` in a served page (its
    # stylesheets do not validate), and the Div's is one small patch
    @property
    def visible(self) -> bool:
        return self.div.visible

    @visible.setter
    def visible(self, shown: bool) -> None:
        self.div.visible = shown

    def __panel__(self):
        return self.pane


def heading(text: str) -> Text:
    """A sidebar section's heading."""
    return Text(f"<strong>{html.escape(text)}</strong>", styles={"font-size": "14px"}, margin=(10, 10, 0, 10))


def alert(**kwargs) -> Text:
    """A refused input's message (HTML), hidden until there is one."""
    box = {"color": "#842029", "background-color": "#f8d7da", "border": "1px solid #f5c2c7",
           "border-radius": "4px", "padding": "8px 12px", "font-size": "13px"}
    return Text(styles=box, visible=False, **kwargs)


# BokehJS re-renders a Div on any change and then lays out the whole root it is in, synchronously: every
# element's computed style and box is read and every figure of the card re-runs its layout (6-12 ms per
# text here, and one change of target sends six to ten new texts before its paint).  Only a change of the
# text alone is written in place; any other change (visibility, styles, several properties at once) takes
# BokehJS's own path, as does a Div that renders math or plain text.  A new text of another size still
# lays the page out: every Bokeh element watches its own size (a ResizeObserver), and a resized Div lays
# its root out before the next paint.  Run once, when a served page's document is ready.
TEXTS_IN_PLACE_JS = """
if (!window._calviz_texts_in_place) {
  window._calviz_texts_in_place = true;
  let Div;
  try { Div = Bokeh.Models.get('Div'); } catch (e) { Div = undefined; }
  const View = Div === undefined ? undefined : Div.prototype.default_view;
  if (View !== undefined && typeof Div.prototype._setv === 'function'
      && typeof View.prototype.rerender === 'function') {
    const setv = Div.prototype._setv;
    Div.prototype._setv = function (changes, options) {
      const attrs = changes instanceof Map ? [...changes.keys()].map((prop) => prop.attr) : [];
      this._calviz_text_only = attrs.length === 1 && attrs[0] === 'text';
      try { return setv.call(this, changes, options); } finally { this._calviz_text_only = false; }
    };
    const rerender = View.prototype.rerender;
    View.prototype.rerender = function () {
      const m = this.model;
      if (m._calviz_text_only && this.markup_el != null && !m.render_as_text
          && typeof this.has_math_disabled === 'function' && this.has_math_disabled())
        this.markup_el.innerHTML = m.text;
      else
        rerender.call(this);
    };
  }
}
"""
