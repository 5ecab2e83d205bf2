from django import template
from django.utils.html import format_html

register = template.Library()

# How KeyboardEvent.key names read on a key cap.
_CAPS = {" ": "Space", "ArrowRight": "→", "ArrowLeft": "←", "ArrowDown": "↓", "ArrowUp": "↑", "Escape": "Esc"}


@register.simple_tag(takes_context=True)
def command_key(context: template.Context, name: str) -> str:
    """A command's key cap, or nothing where a label of the campaign's scheme took that key (the label wins, so the
    button must not promise the command)."""
    taken: set[str] = context.get("taken_keys") or set()
    return "" if name.lower() in taken else key(name)


@register.simple_tag
def key(name: str) -> str:
    """A key cap, e.g. {% key "j" %} → <kbd>j</kbd>."""
    return format_html('<kbd class="key">{}</kbd>', _CAPS.get(name, name))
