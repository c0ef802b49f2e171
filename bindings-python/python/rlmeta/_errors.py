"""The operator tools' own errors: what the host meets and the core never judges (a store, an S3
Inventory, the metadata topic's reading, a ``--command-config``, the cluster's refusals).

Owns: one stable ``code`` per kind of failure, with its meaning (:data:`CODES`, listed in the
README by a test), and the base class that carries it. Each error's message names what was
wrong and where (the file, the field, the key, the property). The core's own errors are
``_native.RlmetaError`` and its subclasses, with the core's codes. Never: a rule; nothing here
decides anything.
"""

from typing import Dict

CODES: Dict[str, str] = {
    "store_not_found": "the store's directory does not exist or is not a directory",
    "store_permission_denied": "the store's directory cannot be read",
    "store_invalid_url": "--store is not a directory, file://, s3://, gs:// or az:// URL with a bucket",
    "store_client_missing": "the store's client library is not installed (boto3, google-cloud-storage, azure-storage-blob)",
    "store_credentials_missing": "no credentials for the store (Azure's connection string)",
    "store_list_failed": "the store refused or failed a listing",
    "store_read_failed": "the store refused or failed a read of one object (HEAD before a deletion)",
    "inventory_not_s3": "--inventory with a store that is not an S3 bucket",
    "inventory_manifest_unreadable": "the manifest cannot be read (missing, not JSON, refused)",
    "inventory_manifest_field_missing": "the manifest lacks a field AWS writes (sourceBucket, fileFormat, files[].key, ...)",
    "inventory_other_bucket": "the manifest or a row is of another bucket than the store's",
    "inventory_unknown_format": "fileFormat is none of CSV, ORC, Parquet",
    "inventory_schema_lacks_field": "fileSchema lacks Key, Size or LastModifiedDate",
    "inventory_bad_time": "creationTimestamp or a row's LastModifiedDate is not a time",
    "inventory_file_not_found": "a file the manifest lists is not next to it",
    "inventory_file_unreadable": "a file the manifest lists cannot be fetched",
    "inventory_md5_mismatch": "a file's MD5 is not the manifest's MD5checksum",
    "inventory_file_invalid": "a file is not a readable gzipped CSV, ORC or Parquet inventory",
    "inventory_row_invalid": "a CSV row has another number of fields than fileSchema names",
    "inventory_client_missing": "ORC and Parquet inventories need pyarrow (rlmeta[inventory])",
    "metadata_not_found": "no __remote_log_metadata partition in the files given",
    "metadata_unreadable": "__remote_log_metadata cannot be read (files or the live topic)",
    "metadata_incomplete": "the live topic was not read to its end within --timeout-ms",
    "command_config_invalid": "a --command-config property the tools cannot honour",
    "authentication_failed": "the cluster refused the credentials or the TLS handshake",
    "authorization_failed": "the cluster's authorizer refused an operation on a resource",
}


class ToolError(Exception):
    """Base of the tools' own errors: ``code`` (a key of :data:`CODES`) and the message."""

    code: str = ""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code if code in CODES else "unknown"


def describe(e: BaseException) -> str:
    """What a tool prints of an error: ``code: message`` for the tools' own, the text else."""
    return f"{e.code}: {e}" if isinstance(e, ToolError) else str(e)
