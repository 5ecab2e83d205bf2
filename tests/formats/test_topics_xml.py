import pytest

from assessments.formats.errors import FormatError
from assessments.formats.topics_xml import TopicRecord, parse_topics


def parse_sample(samples, name):
    return parse_topics((samples / name).read_bytes(), source=name)


def error_for(samples, name) -> FormatError:
    with pytest.raises(FormatError) as caught:
        parse_sample(samples, name)
    return caught.value


def test_it_reads_title_only_topics(samples):
    assert parse_sample(samples, "topics-titles.xml") == [
        TopicRecord(number="51", title="Do we need sex education in schools?", line=3),
        TopicRecord(number="52", title="Should stem cell research be expanded?", line=7),
    ]


def test_it_trims_the_newlines_around_text_and_keeps_curly_quotes(samples):
    (topic,) = parse_sample(samples, "topics-full.xml")

    assert topic.title == "What is the difference between sex and love?"
    assert topic.description == "A potentially younger user has heard people talk about the “difference” between sex and love."
    assert topic.narrative.endswith("understand the user’s question.")


def test_it_splits_comparative_objects_in_order_keeping_their_case(samples):
    train, apple = parse_sample(samples, "topics-comparative.xml")

    assert train.objects == ("Train", "plane")
    assert apple.objects == ("Apple's", "Google's")
    assert apple.title == "Which is better, Apple’s or Google’s services?"
    assert (train.line, apple.line) == (2, 10)


def test_it_reads_cause_and_effect_of_causal_topics(samples):
    (topic,) = parse_sample(samples, "topics-causal.xml")

    assert (topic.cause, topic.effect) == ("computer work", "eye pressure")
    assert topic.objects == ()


def test_it_reads_the_attribute_form_with_query_as_title(samples):
    assert parse_sample(samples, "topics-attribute.xml") == [
        TopicRecord(number="1", title="does computer work increase eye pressure?", line=2),
        TopicRecord(number="2", title="does regular exercise lower blood pressure?", line=5),
    ]


def test_it_keeps_words_inside_inline_markup():
    data = b"<topics><topic><number>1</number><title>Is <i>this</i> fine?</title></topic></topics>"

    assert parse_topics(data, source="t.xml")[0].title == "Is this fine?"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("topics-bad-duplicate-number.xml", "topics-bad-duplicate-number.xml:6: topic 7 appears twice (first on line 2)"),
        ("topics-bad-missing-number.xml", "topics-bad-missing-number.xml:6: topic has no number"),
        ("topics-bad-empty-title.xml", "topics-bad-empty-title.xml:8: topic 2 has an empty title"),
        ("topics-bad-malformed.xml", "topics-bad-malformed.xml:4: malformed XML: Opening and ending tag mismatch"),
        ("topics-bad-no-topics.xml", "topics-bad-no-topics.xml:1: no <topic> elements inside <topics>"),
        ("topics-bad-objects.xml", "topics-bad-objects.xml:5: topic 3: <objects> must name two objects"),
    ],
)
def test_it_rejects_bad_topic_files_naming_the_line(samples, name, message):
    assert str(error_for(samples, name)).startswith(message)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"<topics><topic><number>1</number></topic></topics>", "t.xml:1: topic 1 has an empty title"),
        (b"<topics>\n<topic><number>4 5</number><title>x</title></topic></topics>", "t.xml:2: topic number '4 5' contains whitespace"),
        (b"", "t.xml:1: malformed XML"),
    ],
)
def test_it_rejects_topics_it_could_not_match_against_runs(data, message):
    with pytest.raises(FormatError) as caught:
        parse_topics(data, source="t.xml")

    assert str(caught.value).startswith(message)


def test_it_rejects_a_file_over_the_size_limit():
    data = b"<topics>" + b" " * 100 + b"</topics>"

    with pytest.raises(FormatError) as caught:
        parse_topics(data, source="big.xml", max_bytes=100)

    assert str(caught.value) == "big.xml:1: the file is longer than 100 bytes, the most a topic file may have"


def test_it_refuses_a_billion_laughs_without_expanding_it(samples):
    error = error_for(samples, "topics-attack-billion-laughs.xml")

    assert str(error) == "topics-attack-billion-laughs.xml:2: DOCTYPE and entity declarations are not allowed in topic files"


def test_it_refuses_an_external_entity_and_never_reads_the_file(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-7f3a9")
    data = (
        f'<?xml version="1.0"?>\n<!DOCTYPE topics [<!ENTITY xxe SYSTEM "{secret.as_uri()}">]>\n'
        "<topics><topic><number>1</number><title>&xxe;</title></topic></topics>"
    ).encode()

    with pytest.raises(FormatError) as caught:
        parse_topics(data, source="xxe.xml")

    assert str(caught.value) == "xxe.xml:2: DOCTYPE and entity declarations are not allowed in topic files"
    assert "TOP-SECRET" not in str(caught.value)


def test_it_refuses_the_checked_in_passwd_entity(samples):
    error = error_for(samples, "topics-attack-xxe-passwd.xml")

    assert error.line == 2
    assert "root:" not in str(error)


def utf16(samples, name) -> bytes:
    text = (samples / name).read_text()
    return text.replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="UTF-16"?>').encode("utf-16")


def test_it_refuses_an_external_entity_hidden_from_the_byte_scan_by_utf16(samples):
    """UTF-16 has no ASCII '<!DOCTYPE' bytes: the check after parsing must catch it."""
    with pytest.raises(FormatError) as caught:
        parse_topics(utf16(samples, "topics-attack-xxe-passwd.xml"), source="u16.xml")

    assert str(caught.value) == "u16.xml: DOCTYPE and entity declarations are not allowed in topic files"


def test_it_refuses_a_billion_laughs_hidden_from_the_byte_scan_by_utf16(samples):
    # libxml2 itself may stop it first (entity amplification limit); either way nothing is expanded.
    with pytest.raises(FormatError) as caught:
        parse_topics(utf16(samples, "topics-attack-billion-laughs.xml"), source="u16.xml")

    assert "lollol" not in str(caught.value)


def test_it_reads_the_touche_2022_comparative_topics(touche_data):
    topics = parse_topics((touche_data / "2022-task2" / "topics.xml").read_bytes(), source="topics.xml")

    assert len(topics) == 50
    assert [t.number for t in topics[:5]] == ["2", "3", "8", "9", "12"]
    assert all(len(t.objects) == 2 and t.description and t.narrative for t in topics)
    by_number = {t.number: t for t in topics}
    assert by_number["12"].objects == ("Train", "plane")
    assert by_number["12"].title == "Train or plane? Which is the better choice?"
    assert by_number["2"].title == "Which is better, a laptop or a desktop?"
    assert by_number["72"].objects == ("kids", "adults")
    assert "if it’s worth it" in by_number["72"].description
    assert sum(t.description.count("’") + t.narrative.count("’") for t in topics) == 2


def test_it_reads_the_touche_2023_causal_sample_queries(touche_data):
    topics = parse_topics((touche_data / "2023-task2-sample" / "queries.xml").read_bytes(), source="queries.xml")

    assert [(t.number, t.title, t.line) for t in topics] == [
        ("1", "does computer work increase eye pressure?", 2),
        ("2", "does regular exercise lower blood pressure?", 5),
        ("3", "do windmills cause birds to die?", 8),
    ]
