"""``rmq-conformance``: run the suite against a target, or check a store directory offline.

    rmq-conformance [--target embedded|apache-VERSION|rocketmq-rust-VERSION] [--report DIR] [--strict]
                    [--profile NAME] [-k SEL]
    rmq-conformance --namesrv HOST:PORT --broker HOST:PORT [--proxy HOST:PORT] [--report DIR] [--strict]
                    [--profile NAME] [-k SEL]
    rmq-conformance --proxy HOST:PORT [--broker HOST:PORT] [...]   (the grpc area: RocketMQ 5's SDK protocol)
    rmq-conformance store DIR [--index-sizes SLOTS,ENTRIES] [--report DIR] [--strict] [-k SELECTION]
    rmq-conformance compare A/index.json B/index.json [...] [--label NAME ...] [--out FILE]
    rmq-conformance compare-html REPORT_A REPORT_B --html FILE [--labels A,B]
    rmq-conformance reproduce CASE [--results DIR] (--target NAME | --namesrv HOST:PORT --broker HOST:PORT)
    rmq-conformance report-findings RESULTS_DIR --target-name NAME --out DIR
    rmq-conformance acl-file PATH
    rmq-conformance coverage [--json FILE] [--mutation FIGURES_JSON]
    rmq-conformance client --driver NAME_OR_PATH [--report DIR] [--strict] [-k SEL]   (clients under test)

ACL: ``acl-file PATH`` writes the plain_acl.yml the ``acl`` cases expect; start the broker with
``aclEnable=true`` on it and pass ``--acl-file PATH --broker HOST:PORT`` to run those cases (only those:
an ACL broker refuses the others' unsigned requests). ``--acl`` alone runs them against the embedded
broker started with ACL on that policy. ACL runs are sequential, as some cases change the policy.

``--target apache-5.5.0`` provisions that release of Apache RocketMQ from Maven Central
(``rocketmq_spec.apache``), runs the suite against it and stops it; ``--target rocketmq-rust-1.0.0`` does the
same with that release of rocketmq-rust once ``rmq-rust install 1.0.0`` has built it
(``rocketmq_spec.rocketmq_rust``); ``--namesrv``/``--broker`` check any other running broker. The profile of
known deviations follows the version the target announces in its answers
(``rocketmq_spec.conformance.profile``) unless ``--profile`` names one (``none`` for none) or ``--strict``
asks for none.

Without a target (or with ``--target embedded``) the embedded reference broker is started on loopback and
checked, which is how the suite is meant to be tried first; once it has stopped, the store it wrote is
checked too (reports under ``store/`` of the report directory). The cases run under pytest (in parallel
with ``-n``), which prints progress while they run; the verdict table is printed at the end. ``compare``
writes the case × run matrix of two or more reports as Markdown: two targets side by side, or repeated runs
of one target.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from rocketmq_spec.apache.releases import Release
from rocketmq_spec.codec.acl import Credentials
from rocketmq_spec.conformance import cli_help, embedded
from rocketmq_spec.conformance import profile as profiles
from rocketmq_spec.conformance.acl_policy import ACL_RELEASE, write_acl_file
from rocketmq_spec.conformance.cli_help import ExitStatus
from rocketmq_spec.conformance.embedded import AUTH_TABLES, QUICK_CHECKS, RECALL_ON
from rocketmq_spec.conformance.launcher import Launcher
from rocketmq_spec.conformance.report.html_page import CLAUSE_PAGE
from rocketmq_spec.conformance.target import Target, auth_user_of
from rocketmq_spec.conformance.tls import ClientTls
from rocketmq_spec.conformance.wire import Endpoint
from rocketmq_spec.spec.cli import BadInput, Parser, add_version, fail, one_line, require_file, require_store
from rocketmq_spec.spec.controller import CONTROLLER_RELEASES
from rocketmq_spec.spec.release_rules import Rule, holds
from rocketmq_spec.spec.tls import TLS_MODE_KEY, TlsMode
from rocketmq_spec.spec.wire_release import DEFAULT_RELEASE, SUPPORTED_RELEASES, wire_release
from rocketmq_spec.targets import EMBEDDED, UnknownTarget, parse_target, target_names

PROG = "rmq-conformance"

CASES_DIR = Path(__file__).with_name("cases")

STORE_REPORT = "store"
"""Subdirectory of ``--report`` for the store the embedded broker wrote."""


PROVISIONED_SETTINGS: dict[str, object] = {**QUICK_CHECKS, **RECALL_ON, **AUTH_TABLES}
"""The broker settings every provisioned target runs with, in Java's names: the embedded broker's quick
check-backs and recall (``rocketmq_spec.conformance.embedded``) and the ACL 2.0 tables (each
implementation's launcher writes them with its own names:
``rocketmq_spec.rocketmq_rust.cluster.PROVIDER_NAMES``; older Apache releases ignore them). Flow control is
off in every provisioned release (``rocketmq_spec.apache.servers.DEFAULT_BROKER_CONFIG``)."""


BROKER_FIXTURES = "rocketmq_broker"
"""The pytest11 entry point of the reference broker's fixtures (``pyproject.toml``), which pytest would load
into every run and every worker: the suite judges a broker over TCP and never imports one."""

DEFAULT_WORKERS = "4"
"""pytest-xdist workers for wire runs: cases are mostly waiting on the target, and four keep a local
broker busy without making timing-sensitive cases (long polling) compete for it."""


def _endpoint(text: str) -> Endpoint:
    try:
        return Endpoint.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--report", type=Path, metavar="DIR", help="write index.json, junit.xml, index.html")
    parser.add_argument("--strict", action="store_true", help="NON-STRICT verdicts fail the run")
    parser.add_argument("-k", dest="selection", metavar="SELECTION", help="pytest -k expression")
    parser.add_argument("--profile", metavar="FILE|NAME", help="target profile of known deviations")
    parser.add_argument("-n", dest="workers", default=None, metavar="N", help="pytest-xdist workers")
    parser.add_argument("-v", dest="verbose", action="store_true", help="one line per case")


def _wire_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=PROG, description=cli_help.DESCRIPTION, epilog=cli_help.epilog(),
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version(parser)
    parser.add_argument("--target", default=EMBEDDED, metavar="NAME",
                        help=f"a target the suite starts and stops: {', '.join(target_names())} "
                             f"(default {EMBEDDED})")
    parser.add_argument("--namesrv", type=_endpoint, metavar="HOST:PORT",
                        help="a running name server to check")
    parser.add_argument("--broker", type=_endpoint, metavar="HOST:PORT", help="a running broker to check")
    parser.add_argument("--proxy", type=_endpoint, metavar="HOST:PORT",
                        help="a running gRPC proxy (RocketMQ 5's SDK endpoint): run the grpc area against it")
    parser.add_argument("--grpc", action="store_true",
                        help="with --target apache-5.x: start the broker inside the release's rocketmq-proxy "
                             "(local mode), so the grpc area runs against Apache's proxy too")
    parser.add_argument("--slow", action="store_true", help="include slow cases (expiry, long timeouts)")
    parser.add_argument("--acl-file", type=Path, metavar="PATH",
                        help="the target broker runs with aclEnable=true on this file: run the acl cases")
    parser.add_argument("--acl", action="store_true",
                        help=f"embedded broker with ACL 1.0: run the acl cases (it answers as {ACL_RELEASE} "
                             "unless --wire-release names another release that has ACL 1.0)")
    parser.add_argument("--auth-user", type=_credentials, metavar="NAME:PASSWORD",
                        help="the target broker runs with authenticationEnabled=true and this "
                             "initAuthenticationUser: run the authentication cases")
    parser.add_argument("--authn", action="store_true",
                        help="embedded broker with authenticationEnabled: run the authentication cases")
    parser.add_argument("--wire-release", choices=SUPPORTED_RELEASES,
                        help=f"release the embedded broker answers as (default {DEFAULT_RELEASE})")
    ctl = parser.add_argument_group("controller (RocketMQ 5's automatic failover): the controller area alone")
    ctl.add_argument("--controller", action="store_true",
                     help="with --target apache-5.x: start its name server with a controller inside "
                          "(enableControllerInNamesrv=true) and judge that controller; with the embedded "
                          "target, judge the reference broker in controller mode under Apache 5.5.0's")
    ctl.add_argument("--controller-addr", type=_endpoint, metavar="HOST:PORT",
                     help="a running controller to judge (its controllerDLegerPeers port)")
    ctl.add_argument("--controller-broker", type=_endpoint, metavar="HOST:PORT",
                     help="with --controller-addr: a broker in controller mode, master of its set there, "
                          "whose HA port the ha_autoswitch area connects to as a slave")
    tls = parser.add_argument_group("TLS")
    tls.add_argument("--tls", action="store_true",
                     help="reach the target over TLS (remoting and gRPC) and run the tls area; with the "
                          "embedded broker, start it in --tls-mode")
    tls.add_argument("--tls-mode", choices=[m.value for m in TlsMode], default=TlsMode.PERMISSIVE.value,
                     help="the target's tls.server.mode (default permissive, as Apache's)")
    tls.add_argument("--tls-ca", type=Path, metavar="PEM", help="CA the target's certificate is checked with")
    tls.add_argument("--tls-cert", type=Path, metavar="PEM", help="client certificate (mutual TLS)")
    tls.add_argument("--tls-key", type=Path, metavar="PEM", help="client key (mutual TLS)")
    tls.add_argument("--tls-insecure", action="store_true",
                     help="accept any server certificate: for a self-signed target (Apache's test mode, the "
                          "embedded broker)")
    ha = parser.add_argument_group("HA replication targets")
    ha.add_argument("--ha-master", type=Endpoint.parse, metavar="HOST:PORT",
                    help="a master's HA port (default: the broker's port + 1)")
    ha.add_argument("--commitlog-file-size", type=int, metavar="BYTES",
                    help="mappedFileSizeCommitLog of that master (default 1 GiB)")
    ha.add_argument("--sync-master", type=Endpoint.parse, metavar="HOST:PORT",
                    help="a SYNC_MASTER broker without a slave of its own")
    ha.add_argument("--ha-slave", type=Endpoint.parse, metavar="HOST:PORT",
                    help="a slave broker whose haMasterAddress is --ha-feed")
    ha.add_argument("--ha-feed", type=Endpoint.parse, metavar="HOST:PORT",
                    help="where the suite listens as the slave's master")
    _common(parser)
    return parser


def _store_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=f"{PROG} store", description="check a store directory")
    parser.add_argument("directory", type=Path, help="the store root (the directory holding commitlog/)")
    parser.add_argument("--index-sizes", metavar="SLOTS,ENTRIES",
                        help="maxHashSlotNum,maxIndexNum of the index files, when not in Java's 1:4 ratio")
    parser.add_argument("--replica", type=Path, metavar="DIR",
                        help="a slave's store: its CommitLog and queues must agree with DIR's (its master's)")
    _common(parser)
    return parser


def _compare_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=f"{PROG} compare", description="write the case × run matrix of two or more reports")
    parser.add_argument("reports", type=Path, nargs="+", metavar="INDEX_JSON", help="each run's index.json")
    parser.add_argument("--label", action="append", default=[], metavar="NAME",
                        help="column name of each report, in order (default: its target's addresses)")
    parser.add_argument("--title", default="Conformance results", help="the document's heading")
    parser.add_argument("--out", type=Path, metavar="FILE", help="write here instead of standard output")
    return parser


def _compare(argv: Sequence[str]) -> int:
    from rocketmq_spec.conformance.report.matrix import Report, ReportError, differences, render_comparison

    args = _compare_parser().parse_args(argv)
    if args.label and len(args.label) != len(args.reports):
        raise BadInput(f"{len(args.label)} labels for {len(args.reports)} reports")
    labels = args.label or [None] * len(args.reports)
    try:
        reports = [Report.load(path, label) for path, label in zip(args.reports, labels, strict=True)]
        text = render_comparison(reports, title=args.title)
    except ReportError as exc:
        raise BadInput(str(exc)) from None
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text, encoding="utf-8")
        changed = len(differences(reports))
        print(f"wrote {args.out}: {len(reports)} runs, {changed} case(s) with different verdicts")
    return 0


def _compare_html_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=f"{PROG} compare-html",
                    description="an HTML page comparing two report directories, differing verdicts first")
    parser.add_argument("reports", nargs=2, type=Path, metavar="REPORT_DIR", help="two report directories")
    parser.add_argument("--html", type=Path, required=True, metavar="FILE", help="the page to write")
    parser.add_argument("--labels", metavar="A,B", help="names for the two sides (default: their targets)")
    return parser


def _compare_html(args: argparse.Namespace) -> int:
    from rocketmq_spec.conformance.report import html_compare

    labels = args.labels.split(",", 1) if args.labels else [None, None]
    if len(labels) != 2:
        raise BadInput(f"--labels takes two names separated by a comma, got {args.labels!r}")
    sides = []
    for directory, label in zip(args.reports, labels, strict=True):
        require_file(directory / "index.json", "report index")
        try:
            sides.append(html_compare.load(directory, label))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise BadInput(f"cannot read the report in {directory}: {one_line(exc)}") from None
    page = html_compare.write(args.html, *sides)
    differing = sum(p.differs for p in html_compare.pairs(*sides))
    print(f"{differing} case(s) with different verdicts; wrote {page}")
    return 0


def _target_name(args: argparse.Namespace) -> str | None:
    """The name the run's target goes by: none for one given by address (--namesrv/--broker ...), which is
    not the embedded broker whatever --target's default says."""
    name = getattr(args, "target", None)
    given = any(getattr(args, option, None) for option in ("namesrv", "broker", "ha_master", "sync_master",
                                                            "ha_slave", "controller_addr"))
    return None if name == EMBEDDED and given else name


def pytest_args(target: Target, args: argparse.Namespace, *, slow: bool = False) -> list[str]:
    """The pytest command line for a run; kept separate so it can be inspected and tested."""
    # This process imported the suite's package before pytest starts (and a second run in it, the store
    # run after the wire run, every case module), which pytest cannot assertion-rewrite; the cases report
    # through ``check``, not bare asserts, so nothing is lost and the warning is noise in every run.
    argv = [str(CASES_DIR), "-p", "rocketmq_spec.conformance.plugin", "-r", "fE",
            *("-p", "no:cacheprovider"), *("-p", "no:benchmark"), *("-p", f"no:{BROKER_FIXTURES}"),
            *("-W", "ignore::pytest.PytestAssertRewriteWarning")]
    auth_user = f"{target.authn.access_key}:{target.authn.secret_key}" if target.authn else None
    for name, value in (("target-name", _target_name(args)),
                        ("namesrv", target.namesrv), ("broker", target.broker), ("proxy", target.proxy),
                        ("controller", target.controller), ("controller-broker", target.controller_broker),
                        ("follower-controller", target.follower_controller),
                        ("store", target.store),
                        ("acl-file", target.acl), ("ha-master", target.ha_master),
                        ("auth-user", auth_user),
                        ("sync-master", target.sync_master),
                        ("ha-slave", target.ha_slave), ("ha-feed", target.ha_feed),
                        ("replica", target.replica), ("launch", target.launcher),
                        ("report", args.report), ("profile", args.profile),
                        ("index-sizes", getattr(args, "index_sizes", None))):
        if value is not None:
            argv.append(f"--rmq-{name}={value}")
    if target.commitlog_file_size != Target.commitlog_file_size:
        argv.append(f"--rmq-commitlog-file-size={target.commitlog_file_size}")
    if args.strict:
        argv.append("--rmq-strict")
    if target.tls is not None:
        argv += ["--rmq-tls", f"--rmq-tls-mode={target.tls.mode.value}"]
        files = (("ca", target.tls.ca), ("cert", target.tls.cert), ("key", target.tls.key))
        argv += [f"--rmq-tls-{name}={path}" for name, path in files if path is not None]
        argv += ["--rmq-tls-insecure"] if target.tls.insecure else []
    if args.selection:
        argv += ["-k", args.selection]
    # explicit either way: the project's pytest addopts leave slow cases out, and the last -m wins
    argv += ["-m", "slow or not slow" if slow else "not slow"]
    workers = args.workers or (DEFAULT_WORKERS if target.broker or target.namesrv or target.proxy
                               or target.controller else None)
    if target.acl is not None:
        workers = None  # cases that change the policy must not overlap others
    if workers and workers != "0":
        argv += ["-n", workers]
    argv.append("-v" if args.verbose else "-q")
    return argv


def _embedded(args: argparse.Namespace) -> int:
    """Run the wire cases against the embedded broker, then the store cases against the store it wrote.

    The store is checked only after the broker has stopped cleanly, as a store tool would find it; its
    reports go to ``store/`` under the report directory, beside the wire run's.
    """
    with tempfile.TemporaryDirectory(prefix="rmq-conformance-") as work:
        tls = client_tls(args)
        with embedded.launch(Path(work), acl=getattr(args, "acl", False), authn=getattr(args, "authn", False),
                             release=embedded_release(args),
                             tls_mode=tls.mode if tls else None) as launched:
            target = dataclasses.replace(launched, tls=tls)
            print(f"started the embedded reference broker: namesrv {target.namesrv}, broker {target.broker}"
                  + (f", ACL file {target.acl}" if target.acl else ""), flush=True)
            wire_target = dataclasses.replace(target, store=None)
            wire_code = pytest.main([*pytest_args(wire_target, args, slow=args.slow),
                                     f"--rmq-related={STORE_REPORT}/index.html=the store it wrote"])
        if target.authn is not None:
            return exit_status(wire_code)  # the authentication cases store nothing: no store to check
        assert target.store is not None
        print(f"checking the store the embedded broker wrote: {target.store}", flush=True)
        report = args.report and args.report / STORE_REPORT
        store_args = argparse.Namespace(**{**vars(args), "report": report})
        store_code = pytest.main([*pytest_args(Target(store=target.store), store_args),
                                  "--rmq-related=../index.html=the report on the broker's wire run",
                                  f"--rmq-clause-page=../{CLAUSE_PAGE}"])
    if store_code == pytest.ExitCode.NO_TESTS_COLLECTED:
        store_code = pytest.ExitCode.OK  # a -k selection of wire cases only
    return combined(exit_status(wire_code), exit_status(store_code))


PYTEST_EXITS = {pytest.ExitCode.OK: ExitStatus.CONFORMS,
                pytest.ExitCode.TESTS_FAILED: ExitStatus.NONCONFORMING,
                pytest.ExitCode.USAGE_ERROR: ExitStatus.BAD_INPUT,
                pytest.ExitCode.NO_TESTS_COLLECTED: ExitStatus.BAD_INPUT}
"""pytest's exit codes as the command's; any other (interrupted, internal error, and the plugin's status for
a run whose only failures are its own errors) is RUN_FAILED."""


def exit_status(code: int | pytest.ExitCode) -> ExitStatus:
    return PYTEST_EXITS.get(pytest.ExitCode(code), ExitStatus.RUN_FAILED)


def combined(*statuses: ExitStatus) -> ExitStatus:
    """The status of several runs (a wire run and its store run): a target failure first, then a run
    failure, then bad input."""
    for status in (ExitStatus.NONCONFORMING, ExitStatus.RUN_FAILED, ExitStatus.BAD_INPUT):
        if status in statuses:
            return status
    return ExitStatus.CONFORMS


def _pytest(argv: list[str]) -> ExitStatus:
    return exit_status(pytest.main(argv))


def _provisioned(args: argparse.Namespace) -> int:
    """Run the wire cases against a release started for the run and stopped after it."""
    from rocketmq_spec.apache import ProvisionError
    from rocketmq_spec.targets import started

    tls = client_tls(args)
    with tempfile.TemporaryDirectory(prefix="rmq-conformance-") as work, contextlib.ExitStack() as stack:
        print(f"starting {args.target} ...", flush=True)
        try:
            running = stack.enter_context(started(args.target, Path(work),
                                                  broker_config=PROVISIONED_SETTINGS,
                                                  grpc=args.grpc, controller=args.controller,
                                                  system_properties={TLS_MODE_KEY: tls.mode.value}
                                                  if tls else None))
        except ProvisionError as exc:
            raise BadInput(f"{args.target}: {exc}") from None
        if running.controller_addr:
            print(f"started {args.target}: controller {running.controller_addr} in the name server "
                  f"{running.namesrv_addr}", flush=True)
            follower = running.quorumless_controller_addr
            target = Target(controller=Endpoint.parse(running.controller_addr),
                            controller_broker=Endpoint.parse(running.broker_addr),
                            follower_controller=Endpoint.parse(follower) if follower else None)
            return _pytest(pytest_args(target, args))
        proxy = Endpoint.parse(running.proxy_addr) if running.proxy_addr else None
        print(f"started {args.target}: namesrv {running.namesrv_addr}, broker {running.broker_addr}"
              + (f", gRPC proxy {proxy}" if proxy else ""), flush=True)
        target = Target(Endpoint.parse(running.namesrv_addr), Endpoint.parse(running.broker_addr),
                        proxy=proxy, tls=tls, launcher=Launcher.of(args.target, PROVISIONED_SETTINGS))
        return _pytest(pytest_args(target, args, slow=args.slow))


def _credentials(text: str) -> Credentials:
    try:
        return auth_user_of(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _check_options(args: argparse.Namespace) -> None:
    """Options that would otherwise fail inside every case: a profile that cannot be read, a report
    directory that is a file, a target that is not known."""
    if getattr(args, "target", EMBEDDED) != EMBEDDED:
        try:
            parse_target(args.target)
        except UnknownTarget as exc:
            raise BadInput(str(exc)) from None
        if args.namesrv or args.broker or args.proxy or args.acl_file or args.acl or args.auth_user \
                or args.authn or args.controller_addr:
            raise BadInput("--target starts a target of its own: give it or --namesrv/--broker, not both "
                           "(--acl/--acl-file and --authn/--auth-user go with the embedded broker or "
                           "--broker)")
    if getattr(args, "controller", False):
        found = parse_target(args.target)
        if found is not None and (not isinstance(found, Release)
                                  or not CONTROLLER_RELEASES.holds_for_version(found.mq_version)):
            raise BadInput(f"--controller starts the controller of a --target apache-5.x ({args.target} has "
                           "no controller); give --controller-addr HOST:PORT to judge a running one")
    if getattr(args, "controller_broker", None) and not args.controller_addr:
        raise BadInput("--controller-broker goes with --controller-addr (the controller it is master at)")
    if args.profile and args.profile != profiles.NONE:
        try:
            profiles.load(Path(args.profile))
        except profiles.ProfileError as exc:
            raise BadInput(str(exc)) from None
    if args.report and args.report.exists() and not args.report.is_dir():
        raise BadInput(f"report directory {args.report} is a file")
    embedded_release(args)
    client_tls(args)


def embedded_release(args: argparse.Namespace) -> str:
    """The release the embedded broker answers as: ``--wire-release``; with ``--acl`` one that has ACL 1.0
    (``Rule.ACL_V1``: Apache RocketMQ removed it in 5.3.3), 4.9.8 unless told."""
    chosen = getattr(args, "wire_release", None)
    if not getattr(args, "acl", False):
        return chosen or DEFAULT_RELEASE
    release = chosen or ACL_RELEASE
    if not holds(Rule.ACL_V1, wire_release(release).version):
        raise BadInput(f"--acl runs the ACL 1.0 cases, and ACL 1.0 left Apache RocketMQ in 5.3.3: the "
                       f"embedded broker cannot answer as {release} with it (leave out --wire-release, or "
                       f"give {ACL_RELEASE})")
    return release


def client_tls(args: argparse.Namespace) -> ClientTls | None:
    """The run's TLS (``--tls`` and its options); BadInput for options that do not go together."""
    given = [name for name in ("tls_ca", "tls_cert", "tls_key", "tls_insecure") if getattr(args, name, None)]
    if not getattr(args, "tls", False):
        if given:
            raise BadInput(f"--{given[0].replace('_', '-')} goes with --tls")
        return None
    for name in ("tls_ca", "tls_cert", "tls_key"):
        path = getattr(args, name)
        if path is not None and not path.is_file():
            raise BadInput(f"--{name.replace('_', '-')} {path} is not a file")
    try:
        return ClientTls(args.tls_ca, args.tls_cert, args.tls_key, args.tls_insecure, TlsMode(args.tls_mode))
    except ValueError as exc:
        raise BadInput(str(exc)) from None


def _check_reachable(target: Target) -> None:
    """A target that does not answer is one line, not every case failing in turn."""
    for role, endpoint in (("name server", target.namesrv), ("broker", target.broker),
                           ("controller", target.controller), ("controller-broker", target.controller_broker),
                        ("follower-controller", target.follower_controller),
                           ("SYNC_MASTER broker", target.sync_master), ("slave broker", target.ha_slave)):
        if endpoint is not None and (why := target.unreachable(endpoint)):
            raise BadInput(f"the {role} at {endpoint} is unreachable: {why}")
    if target.proxy is not None and (why := target.proxy_unreachable()):
        raise BadInput(f"the gRPC proxy at {target.proxy} is unreachable: {why}")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv[:1] == ["acl-file"]:
            if len(argv) != 2:
                raise BadInput("usage: rmq-conformance acl-file PATH")
            print(f"wrote {write_acl_file(Path(argv[1]))}")
            return 0
        if argv[:1] == ["client"]:
            from rocketmq_spec.conformance.clients.cli import main as client_main

            return client_main(argv[1:])
        if argv[:1] == ["coverage"]:
            from rocketmq_spec.conformance.coverage import main as coverage_main

            return coverage_main(argv[1:])
        if argv[:1] == ["compare"]:
            return _compare(argv[1:])
        if argv[:1] in (["reproduce"], ["report-findings"]):
            from rocketmq_spec.conformance import findings, reproduce

            return (reproduce if argv[0] == "reproduce" else findings).main(argv[1:], sys.stdout)
        if argv[:1] == ["compare-html"]:
            return _compare_html(_compare_html_parser().parse_args(argv[1:]))
        if argv[:1] == ["store"]:
            args = _store_parser().parse_args(argv[1:])
            _check_options(args)
            replica = require_store(args.replica) if args.replica is not None else None
            return _pytest(pytest_args(Target(store=require_store(args.directory), replica=replica), args))
        args = _wire_parser().parse_args(argv)
        _check_options(args)
        if args.target != EMBEDDED or args.controller:
            return _provisioned(args)
        if args.namesrv or args.broker or args.proxy or args.ha_master or args.sync_master or args.ha_slave \
                or args.controller_addr:
            target = Target(args.namesrv, args.broker, acl=args.acl_file, authn=args.auth_user,
                            controller=args.controller_addr, controller_broker=args.controller_broker,
                            ha_master=args.ha_master,
                            sync_master=args.sync_master, ha_slave=args.ha_slave, ha_feed=args.ha_feed,
                            commitlog_file_size=args.commitlog_file_size or Target.commitlog_file_size,
                            proxy=args.proxy, tls=client_tls(args))
            _check_reachable(target)
            # a broker given by address is not the embedded one --target defaults to: its profile follows
            # the version it answers with
            by_address = argparse.Namespace(**{**vars(args), "target": None})
            return _pytest(pytest_args(target, by_address, slow=args.slow))
    except BadInput as exc:
        return fail(PROG, exc)
    return _embedded(args)


if __name__ == "__main__":
    sys.exit(main())
