"""One page of a listing (runs, the audit trail), as the API returns it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Page:
    items: list[dict[str, Any]]
    page: int
    per_page: int
    total: int

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))

    def as_dict(self) -> dict[str, Any]:
        return {"items": self.items, "page": self.page, "per_page": self.per_page,
                "total": self.total}
