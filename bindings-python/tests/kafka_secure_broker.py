"""A secured single-node KRaft Kafka 4.4.0 for the operator tools' security tests (kafka_broker.py's
node, with TLS everywhere and an authorizer):

- listeners: SASL_SSL (SCRAM-SHA-512, SCRAM-SHA-256, PLAIN; no client certificate), SSL with
  ``ssl.client.auth=required`` (mTLS), and the controller on SSL with mTLS;
- StandardAuthorizer, ``allow.everyone.if.no.acl.found=false``, ``super.users=User:CN=broker``
  (the broker's own certificate, for inter-broker and controller traffic; the tests also use it
  to create topics and ACLs, as an operator's admin would);
- SCRAM users created at format time (``kafka-storage format --add-scram``), PLAIN users in the
  listener's JAAS config;
- every certificate and store made here at run time with openssl and keytool: a CA, the broker's
  key (PKCS12) and, for clients, JKS / PKCS12 / PEM truststores and JKS / PKCS12 keystores.

Tiered storage is off and remote.log.metadata.manager.class.name names the KIP-1266-capable
plugin (never loaded while tiered storage is off), as in test_migration_broker.py's second phase.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Dict, List

from kafka_broker import Broker, free_ports

CAPABLE = "dev.rlmeta.kafka.RlmetaRemoteLogMetadataManager"
STORE_PASSWORD = "store-secret"
KEY_PASSWORD = "key-secret"  # the JKS client key's own password (differs from its store's)
SCRAM_USERS = {"SCRAM-SHA-512": {"checker": "checker-secret", "upgrader": "upgrader-secret", "scanner": "scanner-secret"},
               "SCRAM-SHA-256": {"checker256": "checker256-secret"}}
PLAIN_USERS = {"plainops": "plainops-secret"}
CLIENT_CNS = ("mtls-ops",)


def run(*cmd: str, cwd: Path) -> None:
    out = subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise RuntimeError(f"{cmd[0]} {' '.join(cmd[1:4])}... failed: {out.stderr[-1500:]}")


def make_pki(d: Path) -> None:
    """ca.pem; broker.p12 (CN=broker, SAN IP:127.0.0.1); client stores for each CN in CLIENT_CNS
    (NAME.jks with KEY_PASSWORD on the key, NAME.p12, NAME-chain.pem + NAME-key.pem); truststores
    trust.jks, trust.p12 (keytool's trusted-certificate shapes)."""
    d.mkdir(parents=True, exist_ok=True)
    ossl = lambda *a: run("openssl", *a, cwd=d)  # noqa: E731
    ossl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca-key.pem", "-out", "ca.pem", "-days", "2",
         "-subj", "/CN=rlmeta-test-ca", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n")
    (d / "client.ext").write_text("extendedKeyUsage=clientAuth\n")
    for cn, ext in [("broker", "san.ext")] + [(c, "client.ext") for c in CLIENT_CNS]:
        ossl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{cn}-key.pem", "-out", f"{cn}.csr", "-subj", f"/CN={cn}")
        ossl("x509", "-req", "-in", f"{cn}.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem", "-CAcreateserial", "-days", "2",
             "-out", f"{cn}-cert.pem", "-extfile", ext)
        (d / f"{cn}-chain.pem").write_text((d / f"{cn}-cert.pem").read_text() + (d / "ca.pem").read_text())
        ossl("pkcs12", "-export", "-in", f"{cn}-chain.pem", "-inkey", f"{cn}-key.pem", "-name", cn, "-out", f"{cn}.p12",
             "-passout", f"pass:{STORE_PASSWORD}")
    for cn in CLIENT_CNS:  # a JKS keystore whose key has its own password, as keytool -importkeystore makes it
        run("keytool", "-importkeystore", "-noprompt", "-srckeystore", f"{cn}.p12", "-srcstoretype", "PKCS12",
            "-srcstorepass", STORE_PASSWORD, "-destkeystore", f"{cn}.jks", "-deststoretype", "JKS",
            "-deststorepass", STORE_PASSWORD, "-destkeypass", KEY_PASSWORD, "-srcalias", cn, "-destalias", cn, cwd=d)
    for stype, name in (("JKS", "trust.jks"), ("PKCS12", "trust.p12")):
        run("keytool", "-importcert", "-noprompt", "-alias", "rlmeta-test-ca", "-file", "ca.pem", "-keystore", name,
            "-storetype", stype, "-storepass", STORE_PASSWORD, cwd=d)


class SecureBroker(Broker):
    def __init__(self) -> None:
        super().__init__(metadata_partitions=3)
        self.sasl_port, self.ssl_port, self.controller_port = free_ports(3)
        self.port = self.ssl_port
        self.sasl_bootstrap = f"127.0.0.1:{self.sasl_port}"
        self.ssl_bootstrap = f"127.0.0.1:{self.ssl_port}"
        self.bootstrap = self.sasl_bootstrap
        self.pki = self.dir / "pki"
        make_pki(self.pki)
        scram = [f"{mech}=[name={u},password={pw}]" for mech, users in SCRAM_USERS.items() for u, pw in users.items()]
        self.format_args = [a for s in scram for a in ("--add-scram", s)]

    def properties(self, overrides: Dict[str, str]) -> str:
        pki = self.pki
        plain_users = " ".join(f'user_{u}="{pw}"' for u, pw in PLAIN_USERS.items())
        secured = {
            "listeners": f"SASL_SSL://127.0.0.1:{self.sasl_port},SSL://127.0.0.1:{self.ssl_port},CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": f"SASL_SSL://127.0.0.1:{self.sasl_port},SSL://127.0.0.1:{self.ssl_port}",
            "listener.security.protocol.map": "SASL_SSL:SASL_SSL,SSL:SSL,CONTROLLER:SSL",
            "inter.broker.listener.name": "SSL",
            "controller.quorum.bootstrap.servers": f"127.0.0.1:{self.controller_port}",
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.location": str(pki / "broker.p12"),
            "ssl.keystore.password": STORE_PASSWORD,
            "ssl.key.password": STORE_PASSWORD,
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(pki / "ca.pem"),
            "ssl.client.auth": "required",
            "listener.name.sasl_ssl.ssl.client.auth": "none",
            "sasl.enabled.mechanisms": "SCRAM-SHA-512,SCRAM-SHA-256,PLAIN",
            "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required;",
            "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required;",
            "listener.name.sasl_ssl.plain.sasl.jaas.config": f"org.apache.kafka.common.security.plain.PlainLoginModule required {plain_users};",
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "allow.everyone.if.no.acl.found": "false",
            "super.users": "User:CN=broker",
            "remote.log.storage.system.enable": "false",
            "remote.log.metadata.manager.class.name": CAPABLE,
            "remote.log.metadata.manager.listener.name": "SSL",
        }
        secured.update(overrides)
        return super().properties(secured)

    def admin_conf(self) -> Dict[str, object]:
        """kafka-python settings for the broker's own identity (the super user), over mTLS."""
        import ssl

        ctx = ssl.create_default_context(cafile=str(self.pki / "ca.pem"))
        ctx.load_cert_chain(str(self.pki / "broker-chain.pem"), str(self.pki / "broker-key.pem"))
        return {"bootstrap_servers": [self.ssl_bootstrap], "security_protocol": "SSL", "ssl_context": ctx}

    def store(self, name: str) -> str:
        return str(self.pki / name)


def command_configs(b: SecureBroker, d: Path) -> Dict[str, Path]:
    """One ``--command-config`` file per shape an operator writes; name -> path."""
    ca_inline = "".join(b.pki.joinpath("ca.pem").read_text().splitlines(keepends=False))

    def sasl(user: str, pw: str, mech: str = "SCRAM-SHA-512") -> List[str]:
        module = "org.apache.kafka.common.security.plain.PlainLoginModule" if mech == "PLAIN" else "org.apache.kafka.common.security.scram.ScramLoginModule"
        return ["security.protocol=SASL_SSL", f"sasl.mechanism={mech}", f'sasl.jaas.config={module} required \\',
                f'    username="{user}" password="{pw}";']

    shapes = {
        "scram512-jks": sasl("{user}", "{password}") + [f"ssl.truststore.location={b.store('trust.jks')}",
                                                      f"ssl.truststore.password={STORE_PASSWORD}"],
        "scram512-p12": sasl("{user}", "{password}") + ["ssl.truststore.type=PKCS12", f"ssl.truststore.location={b.store('trust.p12')}",
                                                      f"ssl.truststore.password={STORE_PASSWORD}"],
        "scram512-pem": sasl("{user}", "{password}") + ["ssl.truststore.type=PEM", f"ssl.truststore.location={b.store('ca.pem')}"],
        "scram512-pem-inline": sasl("{user}", "{password}") + ["ssl.truststore.type=PEM", f"ssl.truststore.certificates={ca_inline}"],
        "mtls-jks": ["security.protocol=SSL", f"ssl.truststore.location={b.store('trust.jks')}", f"ssl.truststore.password={STORE_PASSWORD}",
                     f"ssl.keystore.location={b.store('mtls-ops.jks')}", f"ssl.keystore.password={STORE_PASSWORD}",
                     f"ssl.key.password={KEY_PASSWORD}"],
        "mtls-p12": ["security.protocol=SSL", "ssl.truststore.type=PKCS12", f"ssl.truststore.location={b.store('trust.p12')}",
                     f"ssl.truststore.password={STORE_PASSWORD}", "ssl.keystore.type=PKCS12",
                     f"ssl.keystore.location={b.store('mtls-ops.p12')}", f"ssl.keystore.password={STORE_PASSWORD}",
                     f"ssl.key.password={STORE_PASSWORD}"],
        "scram256-pem": sasl("{user}", "{password}", "SCRAM-SHA-256") + ["ssl.truststore.type=PEM", f"ssl.truststore.location={b.store('ca.pem')}"],
        "plain-jks": sasl("{user}", "{password}", "PLAIN") + [f"ssl.truststore.location={b.store('trust.jks')}",
                                                            f"ssl.truststore.password={STORE_PASSWORD}"],
    }
    d.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, lines in shapes.items():
        out[name] = d / f"{name}.properties.in"
        out[name].write_text("\n".join(lines) + "\n")
    return out
