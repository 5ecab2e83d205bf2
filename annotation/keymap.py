"""The judge page's keyboard: label keys from the campaign's scheme, plus the page's commands.

Label keys come from `Campaign.label_scheme` (presets use 0 1 2 3 x, q w e r, a s d, f s n o p c, …). The
command keys below avoid those; a custom scheme may still claim one, and then the label wins and
the command keeps only its other keys (every command has an arrow or symbol key as well, or is
rarely needed), so a key never does two things.
"""

from dataclasses import dataclass

from assessments.labels import LabelScheme


@dataclass(frozen=True)
class Command:
    action: str  # the name static/annotation/judge/main.js dispatches on
    keys: tuple[str, ...]  # KeyboardEvent.key values
    description: str


COMMANDS = (
    Command("next", ("j", "ArrowRight"), "Next document"),
    Command("previous", ("k", "ArrowLeft"), "Previous document"),
    Command("next-unjudged", ("u",), "Next unjudged document"),
    Command("jump", ("l",), "Jump list (go to a position, filter to unjudged)"),
    Command("unjudged-only", ("v",), "Only unjudged documents when moving"),
    Command("highlight", ("h",), "Highlight topic terms and objects on/off"),
    Command("plain", ("t",), "Plain text / formatted document"),
    Command("flag", ("m",), "Flag: unsure / needs discussion"),
    Command("undo", ("z",), "Undo a change that cleared the labels it no longer asks for"),
    Command("note", ("i",), "Write a note (Esc to leave the note)"),
    Command("topic", ("b", "#"), "Topic: show or fold its description and narrative (screens narrower than 1100 px)"),
    Command("guidelines", ("g",), "Guidelines"),
    Command("help", ("?",), "This list of keys"),
    Command("scroll-down", ("ArrowDown", " "), "Scroll the document down (Space: a page)"),
    Command("scroll-up", ("ArrowUp",), "Scroll the document up (Shift+Space: a page)"),
)


# Only where the topic is a proposal with an English translation (a classification campaign's item): its key is
# offered there alone, so the `?` overlay of other campaigns does not list a key that does nothing.
TRANSLATION = Command("translation", ("e", "y"), "Proposal in English / as written")


# Only on an image campaign's judge page: the image at full size, and the pages it came from.
IMAGE_COMMANDS = (
    Command("zoom", ("f", "+"), "Image at full size / fitted"),
    Command("sources", ("s",), "Web pages showing the image: address, the query that found it, its text"),
)


def keymap(scheme: LabelScheme, *, translation: bool = False, images: bool = False) -> dict:
    """Label and command keys for the judge page's script and the `?` overlay; label keys win any clash."""
    labels = scheme.keys()
    taken = {label["key"].lower() for label in labels}
    commands = []
    for command in (*COMMANDS, *((TRANSLATION,) if translation else ()), *(IMAGE_COMMANDS if images else ())):
        keys = [key for key in command.keys if key.lower() not in taken]
        if keys:
            commands.append({"action": command.action, "keys": keys, "description": command.description})
    return {"labels": labels, "commands": commands}
