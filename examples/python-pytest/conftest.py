"""The customers every test of this folder's server sees, and the instant they are seen at (override per test with
@pytest.mark.forge(scenarios=..., now=...))."""

import json

import pytest

NOW = "2025-01-01T00:00:00Z"

#: A sandbox customer who subscribed to pro.monthly on December 15 and renews on January 15.
CUSTOMER = {
    "preset": "sandbox",
    "bundleId": "com.example.shop",
    "now": NOW,
    "purchases": [{"productId": "pro.monthly", "purchaseDate": "2024-12-15T00:00:00Z", "period": "P1M"}],
    "timeline": [{"event": "renew", "productId": "pro.monthly", "count": 1}],
}


@pytest.fixture(scope="session")
def forge_scenarios():
    return [CUSTOMER]


@pytest.fixture(scope="session")
def forge_now():
    return NOW


@pytest.fixture
def customer_file(tmp_path):
    """The customer as a file: `forge jws make --spec` signs what the device holds, with the server's ids."""
    path = tmp_path / "customer.json"
    path.write_text(json.dumps(CUSTOMER))
    return path
