"""Where a webhook may go (tasks.webhooks.policy): hosts, ports, and addresses."""

from __future__ import annotations

import pytest

from evalfleet.tasks.webhooks.policy import Forbidden, Policy, destination, host_port


def resolving(*addresses: str) -> Policy:
    return Policy.of(["hooks.example.com", "api.example.com:8443", "[2001:db8::1]:9000"],
                     ["10.20.0.0/16"], lambda host, port: list(addresses))


def test_an_allowed_host_on_its_port_resolving_to_a_public_address_passes() -> None:
    found, address = resolving("93.184.216.34").check("https://hooks.example.com/in?x=1")

    assert (found.host, found.port, found.target, address) == (
        "hooks.example.com", 443, "/in?x=1", "93.184.216.34")


@pytest.mark.parametrize("url", [
    "https://hooks.example.com:8443/in",     # a bare host allows its scheme's default port only
    "http://api.example.com/in",              # listed with 8443 only
    "https://evil.example.com/in",            # not listed
    "https://hooks.example.com.evil.net/in",  # not a suffix match
    "ftp://hooks.example.com/in",             # not http(s)
    "https://user:pw@hooks.example.com/in",   # credentials
])
def test_urls_the_allowlist_refuses(url: str) -> None:
    with pytest.raises(Forbidden):
        resolving("93.184.216.34").check(url)


@pytest.mark.parametrize("address", [
    "127.0.0.1", "::1", "::ffff:127.0.0.1", "10.0.0.1", "172.16.0.1", "192.168.1.1",
    "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1", "fe80::1", "fc00::1", "not-an-ip",
])
def test_addresses_that_are_not_public_are_refused(address: str) -> None:
    with pytest.raises(Forbidden):
        resolving(address).check("https://hooks.example.com/in")


def test_one_forbidden_address_among_public_ones_refuses_the_name() -> None:
    with pytest.raises(Forbidden, match=r"127\.0\.0\.1"):
        resolving("93.184.216.34", "127.0.0.1").check("https://hooks.example.com/in")


def test_a_network_the_operator_allows_passes_although_private() -> None:
    assert resolving("10.20.3.4").check("https://hooks.example.com/in")[1] == "10.20.3.4"


def test_a_name_that_does_not_resolve_is_refused() -> None:
    def fails(host: str, port: int) -> list[str]:
        raise OSError("Name or service not known")

    policy = Policy.of(["hooks.example.com"], [], fails)
    with pytest.raises(Forbidden, match="does not resolve"):
        policy.check("https://hooks.example.com/")


def test_allowlist_entries_and_urls_are_read_as_the_operator_means_them() -> None:
    assert host_port("Hooks.Example.COM.") == ("hooks.example.com", None)
    assert host_port("[2001:db8::1]:9000") == ("2001:db8::1", 9000)
    assert destination("http://[2001:db8::1]:9000").target == "/"
    with pytest.raises(ValueError, match="names no host"):
        host_port(":8080")
