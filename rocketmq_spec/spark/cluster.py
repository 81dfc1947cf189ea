"""A Spark standalone cluster on loopback, started from the installed PySpark, and jobs submitted to it
with the project shipped the way Spark users ship theirs.

PySpark's package is a complete Spark home (``bin/spark-class``, ``bin/spark-submit``, ``jars/``), so a
master and its workers are the classes ``org.apache.spark.deploy.master.Master`` and
``org.apache.spark.deploy.worker.Worker`` run through ``spark-class``: separate JVMs, each worker
launching executor JVMs that fork Python workers of their own. Everything binds 127.0.0.1 on ports the
daemons pick (port 0) and report in their logs, and runs with small heaps, so clusters of other users of
the machine are left alone.

Jobs go through ``spark-submit --py-files``: :func:`project_archive` zips the project's packages, Spark
copies the archive to every executor and puts it first on its Python workers' path. Executors run the
driver's interpreter (``spark.pyspark.python``), which has the project's dependencies; that the project
itself comes from the archive is what :mod:`rocketmq_spec.spark.cluster_job` reports back (its module files).
A real cluster reads store directories from a file system every node mounts; on one machine every
path is shared.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path
from types import TracebackType

from pyspark.find_spark_home import _find_spark_home
from pyspark.sql import SparkSession

from rocketmq_spec.spark.session import (
    LOOPBACK,
    PYSPARK_PYTHON,
    register_sources,
    session_settings,
    worker_python,
)

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
DAEMON_MEMORY = "256m"
"""Heap of the master and worker daemons (Spark's default is 1g)."""
EXECUTOR_MEMORY = "512m"
WORKER_MEMORY = "640m"
"""What a worker offers: one executor's heap and some slack."""
START_TIMEOUT = 300.0
"""A cold JVM on a loaded 2-core machine takes 10-40 s to come up; this bounds a hung start."""
STOP_GRACE = 20.0
POLL = 0.25
MASTER_URL = re.compile(r"Starting Spark master at (spark://\S+)")
REGISTERED = "Successfully registered with master"

PROJECT_PACKAGES = ("rocketmq_spec.spec", "rocketmq_spec.codec", "rocketmq_spec.spark", "pyspark_rocketmq",
                    "pyspark_rocketmq_store")
"""The packages a task imports: the data sources and jobs, the codec and the spec tables they use."""
NAMESPACE = "rocketmq_spec"
"""The one package the project's modules live in: shipped with its ``__init__`` alone, not whole."""
ARCHIVE_NAME = "rocketmq-spec.zip"


class ClusterError(RuntimeError):
    """A daemon exited or did not come up in time; the message quotes the end of its log."""


def spark_home() -> Path:
    return Path(_find_spark_home())


def project_archive(target: Path) -> Path:
    """A zip of the project's packages (their ``.py`` files, from wherever this interpreter imports
    them) for ``--py-files``; returns its path inside the directory ``target``."""
    archive = target / ARCHIVE_NAME
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for name in PROJECT_PACKAGES:
            spec = find_spec(name)
            if spec is None or not spec.submodule_search_locations:
                raise ClusterError(f"package {name} is not importable here, so it cannot be shipped")
            package = Path(next(iter(spec.submodule_search_locations)))
            for source in sorted(package.rglob("*.py")):
                zipped.write(source, Path(*name.split(".")) / source.relative_to(package))
        namespace = find_spec(NAMESPACE)
        if namespace is None or namespace.origin is None:
            raise ClusterError(f"package {NAMESPACE} is not importable here, so it cannot be shipped")
        zipped.write(namespace.origin, Path(NAMESPACE) / "__init__.py")
    return archive


def _tail(path: Path, lines: int = 25) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""


@dataclass
class Daemon:
    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def wait_for(self, pattern: re.Pattern[str] | str, deadline: float) -> re.Match[str] | None:
        """The first match of ``pattern`` in the log, waiting while the daemon runs."""
        compiled = re.compile(re.escape(pattern)) if isinstance(pattern, str) else pattern
        while time.monotonic() < deadline:
            found = compiled.search(self.log.read_text(errors="replace"))
            if found:
                return found
            if self.process.poll() is not None:
                raise ClusterError(f"{self.name} exited with {self.process.returncode}:\n{_tail(self.log)}")
            time.sleep(POLL)
        raise ClusterError(f"{self.name} did not log {compiled.pattern!r} in time:\n{_tail(self.log)}")

    def stop(self) -> None:
        """SIGTERM to the daemon's process group (it and the executors and Python workers it started),
        SIGKILL after a grace period."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        with contextlib.suppress(ProcessLookupError):  # executors outlive a worker that was SIGKILLed
            os.killpg(self.process.pid, signal.SIGKILL)


@dataclass
class StandaloneCluster:
    """A master and ``workers`` workers of ``cores`` cores each, under ``root`` (logs, work dirs)."""

    root: Path
    workers: int = 2
    cores: int = 1
    daemons: list[Daemon] = field(default_factory=list)
    master_url: str = ""

    def _environment(self) -> dict[str, str]:
        return {**os.environ, "SPARK_HOME": str(spark_home()), "SPARK_LOCAL_IP": LOOPBACK,
                "SPARK_DAEMON_MEMORY": DAEMON_MEMORY, "SPARK_LOG_DIR": str(self.root / "logs"),
                PYSPARK_PYTHON: worker_python()}

    def _start(self, name: str, main_class: str, *args: str) -> Daemon:
        log = self.root / f"{name}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [str(spark_home() / "bin" / "spark-class"), main_class, "--host", LOOPBACK, "--port", "0",
                 "--webui-port", "0", *args], stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=self._environment(), cwd=self.root, start_new_session=True)
        daemon = Daemon(name, process, log)
        self.daemons.append(daemon)
        return daemon

    def start(self) -> StandaloneCluster:
        self.root.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + START_TIMEOUT
        try:
            master = self._start("master", MASTER_CLASS)
            found = master.wait_for(MASTER_URL, deadline)
            assert found is not None
            self.master_url = found.group(1)
            workers = [self._start(f"worker-{n}", WORKER_CLASS, "--cores", str(self.cores), "--memory",
                                   WORKER_MEMORY, "--work-dir", str(self.root / f"work-{n}"), self.master_url)
                       for n in range(1, self.workers + 1)]
            for worker in workers:
                worker.wait_for(REGISTERED, deadline)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for daemon in reversed(self.daemons):
            daemon.stop()
        self.daemons.clear()

    def __enter__(self) -> StandaloneCluster:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.stop()

    @property
    def total_cores(self) -> int:
        return self.workers * self.cores

    def app_conf(self) -> dict[str, str]:
        """Settings of an application on this cluster: every session's (:func:`session_settings`), one
        executor of one core per worker and small heaps."""
        return {
            **session_settings(),
            "spark.master": self.master_url,
            "spark.executor.memory": EXECUTOR_MEMORY,
            "spark.executor.cores": str(self.cores),
            "spark.cores.max": str(self.total_cores),
            "spark.driver.memory": EXECUTOR_MEMORY,
            "spark.scheduler.minRegisteredResourcesRatio": "1.0",
        }

    def session(self, archive: Path, app_name: str = "rmq-spark-cluster") -> SparkSession:
        """A SparkSession of this process on the cluster (this process is the driver), shipping
        ``archive`` to the executors as ``--py-files`` would."""
        builder = SparkSession.builder.appName(app_name)
        for key, value in self.app_conf().items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        spark.sparkContext.addPyFile(str(archive))
        register_sources(spark)
        return spark

    def submit(self, script: Path | str, *args: str, py_files: Sequence[Path] = (),
               conf: Mapping[str, str] | None = None, timeout: float = START_TIMEOUT,
               log: Path | None = None) -> subprocess.CompletedProcess[str]:
        """``spark-submit`` of a Python ``script`` to this cluster (client mode: the driver runs here);
        its standard output is returned, its log written to ``log``."""
        settings = {**self.app_conf(), **(conf or {})}
        command = [str(spark_home() / "bin" / "spark-submit"), "--master", self.master_url,
                   *(part for key, value in settings.items() for part in ("--conf", f"{key}={value}"))]
        if py_files:
            command += ["--py-files", ",".join(str(p) for p in py_files)]
        command += [str(script), *args]
        with (log or self.root / "submit.log").open("a") as err:
            return subprocess.run(command, stdout=subprocess.PIPE, stderr=err, text=True, timeout=timeout,
                                  env={**self._environment(), "PYSPARK_DRIVER_PYTHON": sys.executable},
                                  cwd=self.root, check=False)
