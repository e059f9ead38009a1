"""Fixtures shared by assay-unitxt's tests (pytest finds them here; no import needed)."""

from __future__ import annotations

import socket

import pytest


@pytest.fixture
def no_network(monkeypatch):
    """Every socket connection and name lookup fails the test (the catalog tests run offline)."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"a test reached for the network: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
