"""The ``tls.*`` settings of the reference broker: read as Java reads them, refused when unusable, before
any port is bound."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rocketmq_spec.conformance.recorder import Exchange
from rocketmq_spec.conformance.tls import ClientTls
from rocketmq_spec.conformance.wire import Connection, ConnectionLost, Endpoint
from rocketmq_spec.reference_broker.config import (
    BrokerConfig,
    ConfigError,
    NamesrvConfig,
    apply_properties,
    with_tls_file,
)
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from rocketmq_spec.reference_broker.tls import Opening, TlsFileError, TlsPolicy, TlsSettings, self_signed
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.tls import HANDSHAKE_RECORD_TYPE, TlsMode
from tests import process_tree
from tests.golden import PROJECT_ROOT


def test_defaults_are_javas() -> None:
    settings = TlsSettings()
    assert settings.mode is TlsMode.PERMISSIVE and settings.test_mode and not settings.client_tls


def test_keys_reach_both_processes_and_a_typo_is_refused() -> None:
    broker, namesrv = BrokerConfig(), NamesrvConfig()
    apply_properties({"tls.server.mode": "enforcing"}, broker, namesrv)
    assert broker.tls.mode is namesrv.tls.mode is TlsMode.ENFORCING
    assert broker.tls.client_tls  # NettyClientConfig.useTLS defaults to the enforcing mode
    with pytest.raises(ConfigError, match=r"tls\.server\.mode='enforcng': expected one of disabled"):
        apply_properties({"tls.server.mode": "enforcng"}, BrokerConfig(), NamesrvConfig())


def test_the_config_file_overrides_all_but_the_mode(tmp_path: Path) -> None:
    file = tmp_path / "tls.properties"
    file.write_text("tls.server.mode=disabled\ntls.test.mode.enable=false\n")
    settings = TlsSettings(config_file=str(file))
    merged = with_tls_file(settings)
    assert merged.mode is TlsMode.PERMISSIVE and not merged.test_mode


@pytest.mark.parametrize(("mode", "tls", "plain"), [
    ("permissive", Opening.TLS, Opening.PLAIN), ("enforcing", Opening.TLS, Opening.CLOSE),
    ("disabled", Opening.CLOSE, Opening.PLAIN)])
def test_the_first_byte_decides(mode: str, tls: Opening, plain: Opening) -> None:
    policy = TlsPolicy.of(TlsSettings(mode=TlsMode(mode)))
    assert (policy.decide(HANDSHAKE_RECORD_TYPE), policy.decide(0x00)) == (tls, plain)


def test_missing_certificate_files_are_refused() -> None:
    with pytest.raises(TlsFileError, match=r"tls\.server\.certPath=None: not set"):
        TlsPolicy.of(TlsSettings(test_mode=False))


def test_given_certificate_and_key_are_served(tmp_path: Path) -> None:
    certificate, key = self_signed()
    (tmp_path / "c.pem").write_bytes(certificate)
    (tmp_path / "k.pem").write_bytes(key)
    policy = TlsPolicy.of(TlsSettings(test_mode=False, cert_path=str(tmp_path / "c.pem"),
                                      key_path=str(tmp_path / "k.pem")))
    assert policy.context is not None


def test_rmq_broker_refuses_an_unusable_tls_file_before_binding(tmp_path: Path) -> None:
    (tmp_path / "cert.pem").write_text("not a certificate")
    (tmp_path / "key.pem").write_text("not a key")
    done = process_tree.run([sys.executable, "-m", "rocketmq_spec.reference_broker.cli", "--store",
                             str(tmp_path / "store"), "--namesrv-port", "0", "--broker-port", "0",
                             "--grpc-port", "0",
                             "-Dtls.test.mode.enable=false", f"-Dtls.server.certPath={tmp_path / 'cert.pem'}",
                             f"-Dtls.server.keyPath={tmp_path / 'key.pem'}"],
                            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)})
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.count("\n") == 1 and "not a PEM certificate" in done.stderr
    assert done.stderr.startswith("rmq-broker: not starting: tls.server.certPath=")
    assert not (tmp_path / "store").exists()


def test_mutual_tls_asks_for_the_client_certificate(tmp_path: Path) -> None:
    """tls.server.authClient with need.client.auth=require: a client presenting a trusted certificate is
    served, one presenting none fails the handshake (RMQ-TLS-TEST-MODE's non-test branch)."""
    certificate, key = self_signed()
    cert_file, key_file = tmp_path / "c.pem", tmp_path / "k.pem"
    cert_file.write_bytes(certificate)
    key_file.write_bytes(key)
    broker = BrokerConfig(listen_port=0, grpc_server_port=-1)
    for name, value in {"tls.server.mode": "enforcing", "tls.test.mode.enable": "false",
                        "tls.server.certPath": str(cert_file), "tls.server.keyPath": str(key_file),
                        "tls.server.authClient": "true", "tls.server.trustCertPath": str(cert_file),
                        "tls.server.need.client.auth": "require"}.items():
        broker.tls.set(name, value)
    with SyncEmbeddedRocketMQ(tmp_path / "store", broker_config=broker) as mq:
        endpoint = Endpoint.parse(mq.broker_addr)
        mutual = Connection(endpoint, Exchange(), ClientTls(cert=cert_file, key=key_file, insecure=True))
        try:
            assert mutual.call(RequestCode.GET_BROKER_CONFIG).code == ResponseCode.SUCCESS
        finally:
            mutual.close()
        with pytest.raises(ConnectionLost):
            Connection(endpoint, Exchange(), ClientTls(insecure=True)).call(RequestCode.GET_BROKER_CONFIG)
