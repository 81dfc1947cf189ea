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
from rocketmq_spec.conformance import cli_compare, cli_options, embedded
from rocketmq_spec.conformance import profile as profiles
from rocketmq_spec.conformance.acl_policy import ACL_RELEASE, write_acl_file
from rocketmq_spec.conformance.cli_help import ExitStatus
from rocketmq_spec.conformance.cli_options import PROG
from rocketmq_spec.conformance.embedded import (
    AUTHENTICATION_ON,
    AUTHN_USER,
    AUTHORIZATION_ON,
    PROVISIONED_SETTINGS,
)
from rocketmq_spec.conformance.launcher import Launcher
from rocketmq_spec.conformance.report.html_page import CLAUSE_PAGE
from rocketmq_spec.conformance.target import Target
from rocketmq_spec.conformance.tls import ClientTls
from rocketmq_spec.conformance.wire import Endpoint
from rocketmq_spec.spec.cli import BadInput, fail, require_store
from rocketmq_spec.spec.controller import CONTROLLER_RELEASES
from rocketmq_spec.spec.release_rules import Rule, holds
from rocketmq_spec.spec.tls import TLS_MODE_KEY, TlsMode
from rocketmq_spec.spec.wire_release import DEFAULT_RELEASE, wire_release
from rocketmq_spec.targets import EMBEDDED, UnknownTarget, parse_target

CASES_DIR = Path(__file__).with_name("cases")

STORE_REPORT = "store"
"""Subdirectory of ``--report`` for the store the embedded broker wrote."""




BROKER_FIXTURES = "rocketmq_broker"
"""The pytest11 entry point of the reference broker's fixtures (``pyproject.toml``), which pytest would load
into every run and every worker: the suite judges a broker over TCP and never imports one."""

DEFAULT_WORKERS = "4"
"""pytest-xdist workers for wire runs: cases are mostly waiting on the target, and four keep a local
broker busy without making timing-sensitive cases (long polling) compete for it."""


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


def _provisioned_settings(args: argparse.Namespace) -> dict[str, object]:
    """broker.conf of a started release: with ``--authn`` ACL 2.0 authentication and authorization on (and
    on its proxy), as the embedded broker's ``--authn`` run has them."""
    if not args.authn:
        return PROVISIONED_SETTINGS
    return {**PROVISIONED_SETTINGS, **AUTHENTICATION_ON, **AUTHORIZATION_ON}


def _provisioned(args: argparse.Namespace) -> int:
    """Run the wire cases against a release started for the run and stopped after it (or the controller
    area against the embedded target's controller)."""
    from rocketmq_spec.apache import ProvisionError
    from rocketmq_spec.targets import started

    tls = client_tls(args)
    with tempfile.TemporaryDirectory(prefix="rmq-conformance-") as work, contextlib.ExitStack() as stack:
        print(f"starting {args.target} ...", flush=True)
        try:
            running = stack.enter_context(started(args.target, Path(work),
                                                  broker_config=_provisioned_settings(args),
                                                  grpc=args.grpc, controller=args.controller,
                                                  system_properties={TLS_MODE_KEY: tls.mode.value}
                                                  if tls else None))
        except ProvisionError as exc:
            raise BadInput(f"{args.target}: {exc}") from None
        if running.controller_addr:
            print(f"started {args.target}: controller {running.controller_addr} in the name server "
                  f"{running.namesrv_addr}", flush=True)
            follower = running.quorumless_controller_addr
            # the target's broker is in controller mode, master at that controller: the ha_autoswitch area's
            target = Target(controller=Endpoint.parse(running.controller_addr),
                            controller_broker=Endpoint.parse(running.broker_addr),
                            follower_controller=Endpoint.parse(follower) if follower else None)
            return _pytest(pytest_args(target, args))
        proxy = Endpoint.parse(running.proxy_addr) if running.proxy_addr else None
        print(f"started {args.target}: namesrv {running.namesrv_addr}, broker {running.broker_addr}"
              + (f", gRPC proxy {proxy}" if proxy else ""), flush=True)
        target = Target(Endpoint.parse(running.namesrv_addr), Endpoint.parse(running.broker_addr),
                        proxy=proxy, tls=tls, launcher=Launcher.of(args.target, PROVISIONED_SETTINGS),
                        authn=AUTHN_USER if args.authn else None)
        return _pytest(pytest_args(target, args, slow=args.slow))


def _check_options(args: argparse.Namespace) -> None:
    """Options that would otherwise fail inside every case: a profile that cannot be read, a report
    directory that is a file, a target that is not known."""
    if getattr(args, "target", EMBEDDED) != EMBEDDED:
        try:
            parse_target(args.target)
        except UnknownTarget as exc:
            raise BadInput(str(exc)) from None
        if args.namesrv or args.broker or args.proxy or args.acl_file or args.acl or args.auth_user \
                or args.controller_addr:
            raise BadInput("--target starts a target of its own: give it or --namesrv/--broker, not both "
                           "(--acl/--acl-file and --auth-user go with the embedded broker or --broker)")
        if args.authn and not isinstance(parse_target(args.target), Release):
            raise BadInput(f"--authn starts an Apache release with ACL 2.0 on, not {args.target}")
    if getattr(args, "controller", False):
        found = parse_target(args.target)
        if found is not None and (not isinstance(found, Release)
                                  or not CONTROLLER_RELEASES.holds_for_version(found.mq_version)):
            raise BadInput(f"--controller starts the controller of a --target apache-5.x or embedded "
                           f"({args.target} has no controller); give --controller-addr HOST:PORT to judge a "
                           "running one")
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
            return cli_compare.compare(argv[1:])
        if argv[:1] in (["reproduce"], ["report-findings"]):
            from rocketmq_spec.conformance import findings, reproduce

            return (reproduce if argv[0] == "reproduce" else findings).main(argv[1:], sys.stdout)
        if argv[:1] == ["compare-html"]:
            return cli_compare.compare_html(cli_compare.compare_html_parser().parse_args(argv[1:]))
        if argv[:1] == ["store"]:
            args = cli_options.store_parser().parse_args(argv[1:])
            _check_options(args)
            replica = require_store(args.replica) if args.replica is not None else None
            return _pytest(pytest_args(Target(store=require_store(args.directory), replica=replica), args))
        args = cli_options.wire_parser().parse_args(argv)
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
