import json

from django.db import models


class ListField(models.Field):
    """A list of one element type: a PostgreSQL array (so queries can slice it), JSON text on SQLite (the demo).

    A run's ranking for a topic is stored as one row of such lists instead of a row per line: a million lines
    are a thousand rows to COPY, and a top-k read slices the arrays instead of walking an index.
    """

    description = "A list of one element type"

    def __init__(self, element: str, **kwargs) -> None:
        self.element = element  # a PostgreSQL type name: "text", "integer", "double precision"
        super().__init__(**kwargs)

    def deconstruct(self):
        name, path, args, kwargs = super().deconstruct()
        return name, path, [self.element, *args], kwargs

    def db_type(self, connection) -> str:
        return f"{self.element}[]" if connection.vendor == "postgresql" else "text"

    def get_db_prep_value(self, value, connection, prepared=False):
        if value is None:
            return None
        return list(value) if connection.vendor == "postgresql" else json.dumps(list(value))

    def from_db_value(self, value, expression, connection):
        return json.loads(value) if isinstance(value, str) else value


def max_length(model: type[models.Model], name: str) -> int:
    """The `max_length` of a model's text field, for refusing a too-long value with the file and line that hold it
    before the database refuses the whole batch."""
    field = model._meta.get_field(name)
    if not isinstance(field, models.CharField) or field.max_length is None:
        raise TypeError(f"{model.__name__}.{name} has no max_length")
    return field.max_length
