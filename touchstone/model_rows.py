"""Model instances from rows of hand-written SQL, for the lookups every request makes.

The ORM compiles a QuerySet to SQL again on every call, and for the few lookups each assessor request makes that
compiling was most of their CPU (the assignment with its topic and campaign: 0.8 ms, the same row read by SQL
written here 0.1 ms). Such a lookup writes its SQL with `ModelColumns.sql` and makes the row into instances with
`ModelColumns.instance`, as the ORM would: the database's and the fields' converters applied (JSON decoded,
SQLite's datetimes parsed) and `Model.from_db`, so the instance is an ordinary loaded one (saves, deferred fields
and relations behave as usual).
"""

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar, cast

from django.db import connections
from django.db.models import Field, Model

M = TypeVar("M", bound=Model)
Converter = Callable[[Any, Any, Any], Any]


class ModelColumns(Generic[M]):
    """The columns of `model` under the table alias `alias`: all its concrete fields, or the named ones (the
    others are deferred, loaded on access as with `only()`)."""

    def __init__(self, model: type[M], alias: str, fields: Sequence[str] | None = None) -> None:
        self.model, self.alias = model, alias
        opts = model._meta
        # Named fields are the model's own columns (get_field's other answer, a reverse relation, has none), kept in
        # the model's order: Model.from_db reads the values of a partial row in that order whatever the names say.
        named = {cast(Field, opts.get_field(name)) for name in fields} if fields else set(opts.concrete_fields)
        self.fields = [field for field in opts.concrete_fields if field in named]
        self.attnames = [field.attname for field in self.fields]
        self._sql: dict[str, str] = {}
        self._converters: dict[str, list[tuple[int, list[Converter], Any]]] = {}

    def __len__(self) -> int:
        return len(self.fields)

    def sql(self, using: str = "default") -> str:
        """The select list: `alias."column", ...` in field order."""
        if using not in self._sql:
            quote = connections[using].ops.quote_name
            self._sql[using] = ", ".join(f"{self.alias}.{quote(cast(str, field.column))}" for field in self.fields)
        return self._sql[using]

    def instance(self, row: Sequence[Any], start: int = 0, using: str = "default") -> M:
        """The instance made of `row[start:start + len(self)]`, selected by `sql`."""
        values = list(row[start:start + len(self.fields)])
        connection = connections[using]
        for i, converters, expression in self._field_converters(using):
            for convert in converters:
                values[i] = convert(values[i], expression, connection)
        return self.model.from_db(using, self.attnames, values)

    def _field_converters(self, using: str) -> list[tuple[int, list[Converter], Any]]:
        """Per field that has any, the backend's and the field's converters (what SQLCompiler.get_converters finds
        for the same columns), worked out once per database."""
        found = self._converters.get(using)
        if found is None:
            connection = connections[using]
            found = []
            for i, field in enumerate(self.fields):
                column = field.get_col(self.alias)
                converters = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
                if converters:
                    found.append((i, converters, column))
            self._converters[using] = found
        return found
