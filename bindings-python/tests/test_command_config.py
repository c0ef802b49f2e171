"""``--command-config`` without a cluster: what the tools cannot honour fails before connecting
(exit 2, a message naming the property and what to write instead, no traceback); stores made here
with openssl and keytool are read into the TLS settings; the client key's temporary files are
private and removed; ``import rlmeta`` does not import pyjks or cryptography."""

import ssl
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from rlmeta import cli, migration
from rlmeta._security import ClientSecurity, load_properties

sys.path.insert(0, str(Path(__file__).parent))
from kafka_secure_broker import KEY_PASSWORD, STORE_PASSWORD, make_pki  # noqa: E402

SCRAM = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="ops" password="pw";'


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    make_pki(d)
    return d


def trust(pki, kind):
    return {"jks": {"ssl.truststore.location": str(pki / "trust.jks"), "ssl.truststore.password": STORE_PASSWORD},
            "p12": {"ssl.truststore.type": "PKCS12", "ssl.truststore.location": str(pki / "trust.p12"),
                    "ssl.truststore.password": STORE_PASSWORD},
            "pem": {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki / "ca.pem")}}[kind]


def sasl(**extra):
    return {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": SCRAM, **extra}


REFUSALS = [  # (properties, the property named, a word of what to write instead)
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER",
      "sasl.login.callback.handler.class": "com.example.TokenHandler",
      "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"},
     "sasl.login.callback.handler.class", "SCRAM-SHA-512"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER",
      "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"},
     "sasl.mechanism", "SCRAM-SHA-512"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI",
      "sasl.jaas.config": 'com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/k" principal="ops@R";'},
     "sasl.mechanism", "mTLS"),
    ({"security.protocol": "SASL_SSL", "sasl.jaas.config": SCRAM}, "sasl.mechanism", "GSSAPI"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512"}, "sasl.jaas.config", "ScramLoginModule required"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.jaas.config": SCRAM}, "sasl.jaas.config", "PlainLoginModule"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
      "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required username="ops";'}, "sasl.jaas.config", "password"),
    ({"security.protocol": "SASL_TLS"}, "security.protocol", "SASL_SSL"),
    (sasl(**{"ssl.truststore.type": "BCFKS", "ssl.truststore.location": "{pki}/trust.jks", "ssl.truststore.password": "x"}),
     "ssl.truststore.type", "PKCS12"),
    (sasl(**{"ssl.truststore.location": "{pki}/trust.jks", "ssl.truststore.password": "wrong"}), "ssl.truststore.password", "wrong password"),
    (sasl(**{"ssl.truststore.type": "PKCS12", "ssl.truststore.location": "{pki}/trust.p12", "ssl.truststore.password": "wrong"}),
     "ssl.truststore.password", "wrong password"),
    (sasl(**{"ssl.truststore.location": "{pki}/missing.jks", "ssl.truststore.password": "x"}), "ssl.truststore.location", "cannot read"),
    (sasl(**{"ssl.truststore.type": "PEM", "ssl.truststore.certificates": "not a certificate"}), "ssl.truststore.certificates", "BEGIN CERTIFICATE"),
    ({"security.protocol": "SSL", "ssl.keystore.location": "{pki}/mtls-ops.jks", "ssl.keystore.password": STORE_PASSWORD,
      "ssl.key.password": "wrong"}, "ssl.key.password", "decrypt"),
    ({"security.protocol": "SSL", "ssl.keystore.type": "PKCS12", "ssl.keystore.location": "{pki}/mtls-ops.p12",
      "ssl.keystore.password": "wrong"}, "ssl.keystore.password", "wrong password"),
    ({"security.protocol": "SSL", "ssl.keystore.type": "PKCS11"}, "ssl.keystore.type", "PEM"),
    ({"security.protocol": "SSL", "ssl.engine.factory.class": "com.example.Engine"}, "ssl.engine.factory.class", "remove it"),
    ({"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": "ldap"}, "ssl.endpoint.identification.algorithm", "https"),
]


@pytest.mark.parametrize("props,prop,hint", REFUSALS, ids=[f"{i}-{r[1]}" for i, r in enumerate(REFUSALS)])
def test_what_cannot_be_honoured_fails_before_connecting_with_exit_2(pki, tmp_path, capsys, props, prop, hint):
    f = tmp_path / "client.properties"
    f.write_text("".join(f"{k}={str(v).replace('{pki}', str(pki))}\n" for k, v in props.items()))
    # 127.0.0.1:1 refuses connections: a tool that tried to connect would fail differently (exit 1)
    for run in (lambda: migration.main(["--bootstrap-server", "127.0.0.1:1", "--command-config", str(f), "--check", "--no-progress"]),
                lambda: cli.main(["scan", "--bootstrap-server", "127.0.0.1:1", "--command-config", str(f), "--no-progress"])):
        capsys.readouterr()
        assert run() == 2
        err = capsys.readouterr().err
        assert f"--command-config: {prop}:" in err and hint in err and "Traceback" not in err, err


@pytest.mark.parametrize("kind", ["jks", "p12", "pem", "pem-inline"])
def test_truststores_become_the_trusted_ca(pki, kind):
    if kind == "pem-inline":  # the CA inline on one line, as a properties file holds it
        props = {"ssl.truststore.type": "PEM", "ssl.truststore.certificates": "".join((pki / "ca.pem").read_text().splitlines())}
    else:
        props = trust(pki, kind)
    sec = ClientSecurity(sasl(**props))
    ctx = sec.conf["ssl_context"]
    assert [c["subject"] for c in ctx.get_ca_certs()] == [((("commonName", "rlmeta-test-ca"),),)]
    assert ctx.check_hostname and ctx.verify_mode == ssl.CERT_REQUIRED
    assert sec.conf["sasl_plain_username"] == "ops" and sec.conf["sasl_plain_password"] == "pw"


@pytest.mark.parametrize("store", ["jks", "p12"])
def test_keystores_become_a_private_client_certificate_removed_on_close(pki, store):
    props = {"security.protocol": "SSL", **trust(pki, "pem"), "ssl.keystore.location": str(pki / f"mtls-ops.{store}"),
             "ssl.keystore.password": STORE_PASSWORD, "ssl.key.password": KEY_PASSWORD if store == "jks" else STORE_PASSWORD}
    if store == "p12":
        props["ssl.keystore.type"] = "PKCS12"
    sec = ClientSecurity(props)
    d = Path(sec._dir)
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    files = sorted(d.iterdir())
    assert [f.name for f in files] == ["chain.pem", "key.pem"]
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    assert b"ENCRYPTED PRIVATE KEY" in (d / "key.pem").read_bytes()  # never the bare key on disk
    chain = (d / "chain.pem").read_text()
    out = subprocess.run(["openssl", "x509", "-noout", "-subject"], input=chain, capture_output=True, text=True, check=True)
    assert "CN = mtls-ops" in out.stdout and chain.count("BEGIN CERTIFICATE") == 2  # the leaf and its CA
    sec.close()
    assert not d.exists()


def test_properties_file_forms(tmp_path):
    f = tmp_path / "c.properties"
    f.write_text("# a comment\n! another\nsecurity.protocol : SASL_SSL\nsasl.mechanism SCRAM-SHA-256\n"
                 'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n'
                 '    username="a b" password="p\\"q";\n')
    props = load_properties(str(f))
    assert props["security.protocol"] == "SASL_SSL" and props["sasl.mechanism"] == "SCRAM-SHA-256"
    sec = ClientSecurity(props)
    assert (sec.conf["sasl_plain_username"], sec.conf["sasl_plain_password"]) == ("a b", 'p"q')


def test_import_rlmeta_does_not_import_the_store_libraries():
    code = "import sys, rlmeta; print(sorted(m for m in ('jks', 'cryptography', 'kafka') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    assert out.stdout.strip() == "[]"
    # and both are installed (the tools need them)
    for mod in ("jks", "cryptography"):
        subprocess.run([sys.executable, "-c", f"import {mod}"], check=True, cwd="/")
