"""Topics as `number<TAB>title` lines (BEIR, Anserini, ir_datasets), and telling them from XML by content."""

import gzip

import pytest

from assessments.formats.errors import FormatError
from assessments.formats.topics import parse_topic_file
from assessments.formats.topics_tsv import parse_topics_tsv
from assessments.formats.topics_xml import TopicRecord


def test_it_reads_numbers_and_titles_in_file_order_skipping_blank_lines():
    data = "\ufeff1\tShould teachers get tenure?\r\n\n25\t  Is vaping safe?  \n".encode()

    assert parse_topics_tsv(data, source="t.tsv") == [
        TopicRecord(number="1", title="Should teachers get tenure?", line=1),
        TopicRecord(number="25", title="Is vaping safe?", line=3),
    ]


@pytest.mark.parametrize(
    ("data", "line", "reason"),
    [
        (b"1\tA?\n2 Q0 doc 1 0.5 tag\n", 2, "expected number<TAB>title (topic files are XML or number<TAB>title lines), found 1"),
        (b"1\tA?\n2\tB?\textra\n", 2, "found 3 tab-separated fields"),
        (b"1\tA?\n\t B?\n", 2, "topic number '' is empty or contains whitespace"),
        (b"1 2\tA?\n", 1, "topic number '1 2' is empty or contains whitespace"),
        (b"1\tA?\n2\t \n", 2, "topic 2 has an empty title"),
        (b"1\tA?\n\n1\tB?\n", 3, "topic 1 appears twice (first on line 1)"),
        (b"1\tA?\n2\t\xe9t\xe9\n", 2, "not UTF-8 text"),
        (b"\n \n", None, "no topics: expected XML or number<TAB>title lines"),
    ],
)
def test_it_names_the_line_and_the_problem(data, line, reason):
    with pytest.raises(FormatError) as caught:
        parse_topics_tsv(data, source="t.tsv")
    assert (caught.value.line, caught.value.source) == (line, "t.tsv")
    assert reason in caught.value.reason


@pytest.mark.parametrize(
    "data",
    [
        b"<topics><topic><number>7</number><title>A?</title></topic></topics>",
        b"\xef\xbb\xbf\n  <topics><topic><number>7</number><title>A?</title></topic></topics>",
        '<?xml version="1.0" encoding="UTF-16"?><topics><topic><number>7</number><title>A?</title></topic></topics>'.encode("utf-16"),
    ],
)
def test_a_file_is_xml_or_tsv_by_its_content(data):
    [topic] = parse_topic_file(data, source="upload")
    assert (topic.number, topic.title) == ("7", "A?")
    assert parse_topic_file(b"7\tA?\n", source="topics.xml") == [TopicRecord(number="7", title="A?", line=1)]


def test_a_topic_file_over_the_limit_is_refused_whole():
    with pytest.raises(FormatError, match="longer than 10 bytes, the most a topic file may have"):
        parse_topic_file(b"1\tA question?\n", source="t.tsv", max_bytes=10)


def test_it_reads_the_beir_touche_2020_topics(touche_data):
    path = touche_data / "beir-webis-touche2020" / "topics.beir-v1.0.0-webis-touche2020.test.tsv.gz"
    topics = parse_topic_file(gzip.decompress(path.read_bytes()), source=path.name)

    assert len(topics) == 49 and "25" not in {t.number for t in topics}
    assert (topics[0].number, topics[0].title) == ("1", "Should teachers get tenure?")
    assert [t.number for t in topics] == [str(n) for n in range(1, 51) if n != 25]
