"""Refreshed catalogs for tests: bundled types as a refresh of one region describes them, and their files."""

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from sizing.karpenter.catalog import (
    CatalogInfo,
    InstanceType,
    catalog_by_name,
    catalog_document,
    dump_catalog_document,
    load_catalog,
)

REFRESHED_ON = "2026-08-03"
REFRESHED_AT = f"{REFRESHED_ON}T09:30:00Z"


def refreshed(
    name: str,
    region: str,
    price: float | None,
    spot: Mapping[str, float] | None = None,
    zones: Iterable[str] | None = None,
) -> InstanceType:
    """The bundled type `name` with `region`'s on-demand price, spot prices by zone and offered zones
    (None: not recorded)."""
    base = catalog_by_name(load_catalog())[name].to_dict()
    return InstanceType(
        **{
            **base,
            "prices": {region: price} if price is not None else {},
            "spot_prices": {region: dict(spot)} if spot else {},
            "zones": {region: list(zones)} if zones is not None else {},
        }
    )


def refreshed_info(region: str, path: str | None = None) -> CatalogInfo:
    """The header a complete refresh of `region` writes (read from `path`, if given)."""
    return CatalogInfo(
        source="test",
        path=path,
        region=region,
        prices_as_of={region: REFRESHED_ON},
        spot_prices_as_of={region: REFRESHED_AT},
        offerings_as_of={region: REFRESHED_AT},
    )


def write_catalog(path: Path, instances: Sequence[InstanceType], region: str) -> Path:
    """Write a refreshed catalog of `region` holding `instances` to `path`."""
    info = refreshed_info(region)
    path.write_text(dump_catalog_document(catalog_document(instances, info.source, info)))
    return path
