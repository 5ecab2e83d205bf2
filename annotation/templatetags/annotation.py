from django import template
from django.utils.html import format_html

register = template.Library()

# How KeyboardEvent.key names read on a key cap.
_CAPS = {" ": "Space", "ArrowRight": "→", "ArrowLeft": "←", "ArrowDown": "↓", "ArrowUp": "↑", "Escape": "Esc"}


@register.simple_tag
def key(name: str) -> str:
    """A key cap, e.g. {% key "j" %} → <kbd>j</kbd>."""
    return format_html('<kbd class="key">{}</kbd>', _CAPS.get(name, name))
