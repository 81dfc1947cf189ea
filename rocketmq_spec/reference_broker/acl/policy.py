"""Every ACL file a broker reads, merged as ``PlainPermissionManager`` merges them (RMQ-ACL-FILE-LOCATION).

The files are the default one (``conf/plain_acl.yml``) and each ``*.yml``/``*.yaml`` below ``conf/acl``
beside it, that directory's files first. An access key belongs to the first file that defines it
(``owner``, Java's accessKeyTable); global whitelists add up. Reloading one changed file keeps the keys
it no longer defines known (they answer "No PlainAccessResource"), while a change in the set of files
reloads everything afresh, as Java's watcher does.
"""

from __future__ import annotations

from pathlib import Path

from . import plain_file
from .addresses import AddressMatcher
from .plain_file import Account, DataVersion, PlainAcl

ACL_DIRECTORY = "acl"
ACL_SUFFIXES = (".yml", ".yaml")


class AclPolicy:
    def __init__(self, default: Path) -> None:
        self.default = default.resolve()
        self.directory = self.default.parent / ACL_DIRECTORY
        self.files: dict[Path, PlainAcl] = {}
        self.owner: dict[str, Path] = {}
        self.version = DataVersion()
        """The default file's version as last loaded (GET_BROKER_CLUSTER_ACL_INFO's ``version``)."""
        self.file_versions: dict[Path, DataVersion] = {}
        """Every file's version, stepped at once by the admin commands (``allAclFileVersion``)."""
        self.load_all()

    def paths(self) -> list[Path]:
        found = sorted(p.resolve() for p in self.directory.rglob("*") if p.is_file()
                       and p.suffix in ACL_SUFFIXES) if self.directory.is_dir() else []
        return [p for p in found if p != self.default] + [self.default]

    def load_all(self) -> None:
        """Read every file; raises ``AclFileError`` (and changes nothing) if any is unusable."""
        files = {path: plain_file.load(path) for path in self.paths()}
        owner: dict[str, Path] = {}
        for path, acl in files.items():
            for key in list(acl.accounts):
                if owner.setdefault(key, path) != path:
                    del acl.accounts[key]  # defined by an earlier file: Java keeps the first
        self.files, self.owner = files, owner
        self.file_versions = {path: acl.version for path, acl in files.items()}
        self.version = files[self.default].version

    def reload(self, path: Path) -> None:
        """One changed file read again; raises ``AclFileError`` (and changes nothing) if unusable."""
        acl = plain_file.load(path)
        for key in list(acl.accounts):
            if self.owner.setdefault(key, path) != path:
                del acl.accounts[key]
        self.files[path] = acl
        self.file_versions[path] = acl.version
        if path == self.default:
            self.version = acl.version

    @property
    def global_whites(self) -> list[AddressMatcher]:
        return [white for acl in self.files.values() for white in acl.global_whites]

    def account(self, access_key: str) -> Account | None:
        acl = self.files.get(self.owner[access_key])
        return None if acl is None else acl.accounts.get(access_key)

    def file_of(self, access_key: str) -> Path:
        """Where an account is written: its own file, the default file for a new one."""
        return self.owner.get(access_key, self.default)

    def put(self, account: Account) -> None:
        path = self.file_of(account.access_key)
        self.owner[account.access_key] = path
        self.files[path].accounts[account.access_key] = account
