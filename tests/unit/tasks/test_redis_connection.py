"""One way to Redis (``tasks.redis_connection``): Sentinel URLs read, composed from the
settings, and turned into kombu's broker form."""

from __future__ import annotations

import pytest

from evalfleet.tasks.redis_connection import (
    RedisURLError,
    SentinelTarget,
    broker,
    sentinel_target,
    sentinel_url,
)
from evalfleet.workers.settings import Settings

pytestmark = pytest.mark.unit


def test_a_sentinel_url_names_the_sentinels_master_database_and_login() -> None:
    found = sentinel_target("sentinel://app:s%40cret@s1:26379,s2,10.0.0.3:26380/evalfleet/2")

    assert found == SentinelTarget((("s1", 26379), ("s2", 26379), ("10.0.0.3", 26380)),
                                   "evalfleet", 2, "app", "s@cret")
    assert found.connection_kwargs() == {"db": 2, "username": "app", "password": "s@cret"}
    assert found.sentinel_kwargs() == {}


def test_tls_and_a_login_of_the_sentinels_own_come_from_the_query() -> None:
    found = sentinel_target("sentinels://:pw@s1:26379/m?ssl_cert_reqs=required&ssl_ca_certs="
                            "/ca.pem&sentinel_password=spw")

    assert found is not None and found.tls
    assert found.connection_kwargs() == {"db": 0, "password": "pw", "ssl": True,
                                         "ssl_cert_reqs": "required", "ssl_ca_certs": "/ca.pem"}
    assert found.sentinel_kwargs() == {"ssl": True, "ssl_cert_reqs": "required",
                                       "ssl_ca_certs": "/ca.pem", "password": "spw"}


@pytest.mark.parametrize(("url", "said"), [
    ("sentinel://s1:26379", "a Sentinel URL is sentinel://HOST:PORT"),
    ("sentinel:///evalfleet/0", "a Sentinel URL is sentinel://HOST:PORT"),
    ("sentinel://s1:port/evalfleet/0", "a sentinel's port is a number"),
    ("sentinel://:pw@s1/evalfleet/zero", "sentinel://s1/evalfleet/zero: the database is a number"),
])
def test_a_wrong_sentinel_url_says_what_is_wrong_and_never_the_password(url: str,
                                                                       said: str) -> None:
    with pytest.raises(RedisURLError, match=said) as raised:
        sentinel_target(url)
    assert "pw" not in str(raised.value)


def test_plain_urls_are_not_sentinels() -> None:
    assert sentinel_target("redis://:pw@127.0.0.1:6379/0") is None
    assert broker("rediss://h:6380/1").url == "rediss://h:6380/1"


def test_the_settings_compose_a_sentinel_url_from_sentinels_and_the_redis_url() -> None:
    """EVALFLEET_REDIS_SENTINELS and _MASTER: login, database and TLS from the Redis URL."""
    plain = Settings(redis_url="redis://:pw@ignored:6379/3", redis_sentinels="s1:1, s2:2",
                     redis_master="fleet-a")
    tls = Settings(redis_url="rediss://:pw@x/0?ssl_cert_reqs=none", redis_sentinels="s1:1")

    assert plain.redis_url == "sentinel://:pw@s1:1,s2:2/fleet-a/3"
    assert tls.redis_url == "sentinels://:pw@s1:1/evalfleet/0?ssl_cert_reqs=none"
    assert sentinel_url("redis://127.0.0.1:6379", "s:9", "m") == "sentinel://s:9/m/0"
    assert Settings(redis_url=plain.redis_url).fleet_label == plain.fleet_label


def test_the_broker_gets_one_kombu_url_per_sentinel_and_the_master_name() -> None:
    found = broker("sentinel://:p%2Fw@s1:1,s2:2/fleet-a/3")

    assert found.url == "sentinel://:p%2Fw@s1:1/3;sentinel://:p%2Fw@s2:2/3"
    assert found.transport_options == {"master_name": "fleet-a", "sentinel_kwargs": {}}
    assert found.use_ssl is None
