"""Untrusted web documents made safe to show, reduced to the text a reader sees, and the topic terms to
highlight in them.

Crawled HTML (ClueWeb, args.me sources) is hostile by default: it may carry scripts, event
handlers, `javascript:` links, styles that hide or overlay our controls, frames, forms and images
that call home. `document_html` keeps only an allowlist of text-structure tags with harmless
attributes, and the judge page adds a Content-Security-Policy without inline scripts as a
second wall. Nothing here imports Django, so it is tested directly with XSS vectors.
"""

import re
from collections.abc import Iterator
from functools import lru_cache
from html import escape

import nh3
from lxml import etree
from lxml import html as lxml_html

# Structure and emphasis only. No img/picture/video/audio (no network from a judged page), no
# style/link/meta (no restyling of our page), no iframe/object/embed/form/input (no nested
# content or posting), no svg/math (their own script and event surfaces).
ALLOWED_TAGS = frozenset({
    "a", "abbr", "address", "article", "aside", "b", "bdi", "bdo", "blockquote", "br", "caption", "cite",
    "code", "col", "colgroup", "dd", "del", "details", "dfn", "div", "dl", "dt", "em", "figcaption",
    "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "i", "ins", "kbd", "li",
    "main", "mark", "nav", "ol", "p", "pre", "q", "s", "samp", "section", "small", "span", "strong",
    "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "time", "tr", "u", "ul", "var",
    "wbr",
})
# Dropped together with their content: code, styling and embedded documents are not text to judge.
DROPPED_WITH_CONTENT = frozenset({
    "script", "style", "noscript", "template", "iframe", "frame", "frameset", "object", "embed", "applet",
    "svg", "math", "textarea", "select", "option", "button", "title", "head",
})
# No id/name/class: they could clobber our page's globals or borrow its styles.
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "abbr": {"title"},
    "ol": {"start"},
    "td": {"colspan", "rowspan"},
    "th": {"colspan", "rowspan", "scope"},
    "time": {"datetime"},
}
LINK_REL = "noopener noreferrer nofollow"

# The second wall for pages that show a sanitised document outside the judge page (agreement, adjudication): nothing
# on them may run a script, load a foreign resource or post elsewhere.
DOCUMENT_PAGE_CSP = "; ".join([
    "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:",
    "form-action 'self'", "base-uri 'none'", "frame-ancestors 'none'", "object-src 'none'",
])

_cleaner = nh3.Cleaner(
    tags=set(ALLOWED_TAGS),
    clean_content_tags=set(DROPPED_WITH_CONTENT),
    attributes={tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()},
    link_rel=LINK_REL,
    url_schemes={"http", "https", "mailto"},
    # A relative link in a crawled page would point into Touchstone itself.
    url_relative="deny",
    set_tag_attribute_values={"a": {"target": "_blank"}},
    strip_comments=True,
)


@lru_cache(maxsize=64)
def document_html(body: str, *, is_html: bool) -> str:
    """The document body as HTML that is safe to insert into our page.

    HTML bodies are sanitised; plain-text bodies are escaped and split into paragraphs at blank
    lines. Cached per process: sanitising a large page costs milliseconds, and an assessor who
    goes back and forth asks for the same documents again.
    """
    if is_html:
        return _cleaner.clean(body)
    paragraphs = (escape(p.strip()).replace("\n", "<br>") for p in re.split(r"\n\s*\n", body.replace("\r\n", "\n")))
    return "".join(f"<p>{p}</p>" for p in paragraphs if p)


# Elements whose content is not text a reader sees.
_NOT_TEXT = frozenset({"script", "style", "noscript", "template", "head"})
# Elements a browser lays out apart from the text around them (block boxes, line breaks, table cells, list
# items): words on either side never run together, whereas `S<b>pa</b>n` is one word.
_APART = frozenset("""
address article aside blockquote br caption dd details dialog div dl dt fieldset figcaption figure footer form
h1 h2 h3 h4 h5 h6 header hr li main nav ol option p pre section summary table tbody td tfoot th thead title tr ul
""".split())


def html_text(body: str) -> str:
    """The text a reader sees in an HTML body, words separated by single spaces.

    Duplicate grouping compares documents by this, so markup shared by every page of a site (menus, scripts)
    does not make two different articles near-duplicates. Content that is not shown is dropped, and where it or a
    block element (_APART) stood there is a space, so `foo<script>x</script>bar` and `<p>a</p><p>b</p>` keep two
    words; inline elements and comments join what is around them, as a browser shows it.
    """
    try:
        tree = lxml_html.document_fromstring(body)
    except (etree.ParserError, ValueError):  # empty, or only a comment: no text
        return ""
    return " ".join("".join(_shown_text(tree)).split())


def _shown_text(root: etree._Element) -> Iterator[str]:
    """The pieces of text of `root` in document order, with " " at the edges of elements shown apart. A stack,
    not recursion: hostile HTML may nest deeper than Python's recursion limit."""
    todo: list = [root]
    while todo:
        node = todo.pop()
        if isinstance(node, str):
            yield node
            continue
        tag = node.tag.lower() if isinstance(node.tag, str) else ""  # "": a comment or processing instruction
        gap = " " if tag in _APART or tag in _NOT_TEXT else ""
        todo += [node.tail or "", gap]  # popped last: after the element
        if tag and tag not in _NOT_TEXT:
            todo += reversed(node)
            todo.append(node.text or "")
        todo.append(gap)


def safe_link(url: str) -> str:
    """`url` if it is an http(s) address a link may point to, else "" (no javascript:, data:...)."""
    return url if re.match(r"(?i)^https?://[^\s]+$", url.strip()) else ""


# Words of a question that say nothing about its subject: highlighting them is noise.
_STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have
having he her here hers him his how i if in into is it its itself just me more most my no nor not
now of off on once only or other our out over own same she should so some such than that the their
them then there these they this those through to too under until up very was we were what when
where which while who whom why will with would you your
better best worse worst good bad difference differences different compare compared comparison
vs versus prefer preferable rather instead cause causes caused lead leads effect effects
""".split())


def topic_terms(*, title: str, compared_objects: list[str], cause: str = "", effect: str = "") -> dict:
    """What the judge page highlights: the compared objects (or cause and effect), each in its
    own colour, and the other content words of the topic title. A word of an object of several words ("eating
    broccoli") stays a term, so a document that has the word alone ("broccoli") is marked too."""
    objects = [o.strip() for o in [*compared_objects, cause, effect] if o and o.strip()]
    covered = {o.lower() for o in objects if len(re.findall(r"\w+", o)) == 1}
    terms = []
    for word in re.findall(r"\w[\w'-]*\w|\w", title.lower()):
        if len(word) > 2 and word not in _STOPWORDS and word not in covered and word not in terms:
            terms.append(word)
    return {"objects": objects, "terms": terms}
