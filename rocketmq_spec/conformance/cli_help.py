"""What ``rmq-conformance --help`` tells a reader: the forms of the command, examples, the profiles shipped
with the suite and the exit statuses, in plain text (no markup), generated from the same tables the
command uses so it cannot drift from them."""

from __future__ import annotations

import enum
import textwrap

from rocketmq_spec.conformance import profile as profiles


class ExitStatus(enum.IntEnum):
    """What the command's exit status says (:data:`EXIT_MEANINGS`)."""

    CONFORMS = 0
    NONCONFORMING = 1
    BAD_INPUT = 2
    RUN_FAILED = 3


EXIT_MEANINGS = {
    ExitStatus.CONFORMS: "every case the run judged conforms (NON-STRICT counts as conforming unless "
                         "--strict)",
    ExitStatus.NONCONFORMING: "the target failed at least one case (FAIL or CRASH; NON-STRICT too under "
                              "--strict)",
    ExitStatus.BAD_INPUT: "bad input, reported in one line before any case ran (an unknown option, a missing "
                          "file, a target that does not answer, a selection matching no case)",
    ExitStatus.RUN_FAILED: "the run itself failed (ERROR: a case the suite could not judge, an interrupted "
                           "run): nothing is said of the target",
}

DESCRIPTION = """\
Run the RocketMQ conformance suite against a target, or check a store directory offline.

  rmq-conformance [--target embedded|apache-VERSION] [--report DIR] [--strict] [--profile NAME] [-k SEL]
  rmq-conformance --namesrv HOST:PORT --broker HOST:PORT [--report DIR] [--strict] [--profile NAME]
  rmq-conformance store DIR [--index-sizes SLOTS,ENTRIES] [--replica DIR] [--report DIR]
  rmq-conformance compare A/index.json B/index.json [...] [--label NAME ...] [--out FILE]
  rmq-conformance compare-html REPORT_A REPORT_B --html FILE [--labels A,B]
  rmq-conformance acl-file PATH
  rmq-conformance coverage [--json FILE] [--mutation FIGURES_JSON]

Without a target the embedded reference broker is started on loopback and checked, then the store it
wrote (report under store/ of the report directory): the way to try the suite first. --target
apache-VERSION provisions that release of Apache RocketMQ (jars from Maven Central, Java needed), checks
it and stops it; --namesrv and --broker check a broker that is already running. Cases run in parallel
(-n); the verdict table is printed at the end and the report written to --report.

ACL: "acl-file PATH" writes the plain_acl.yml the acl cases expect; start the broker with aclEnable=true
on it and give --acl-file PATH --broker HOST:PORT to run those cases (only those: an ACL broker refuses
the other cases' unsigned requests). --acl runs them against the embedded broker."""

EXAMPLES = """\
examples:
  rmq-conformance --report reports/conformance
  rmq-conformance --target apache-4.9.7 --report reports/apache-4.9.7
  rmq-conformance --namesrv 127.0.0.1:9876 --broker 127.0.0.1:10911 --report reports/mine -k "send or pull"
  rmq-conformance store ~/store/broker-a --report reports/store"""


def profiles_text() -> str:
    """The profiles shipped with the suite, each with the releases it is chosen for."""
    lines = ["profiles (--profile NAME; by default the one covering the version the target announces,",
             f"  '{profiles.NONE}' for none):"]
    for shipped in profiles.shipped():
        releases = ", ".join(shipped.versions) or "any release"
        lines.append(f"  {shipped.file:<16} {shipped.name} ({releases}; {len(shipped.deviations)} cited "
                     "deviations)")
    return "\n".join(lines)


def exit_text() -> str:
    return "exit status:\n" + "\n".join(textwrap.fill(text, 100, initial_indent=f"  {int(code)}  ",
                                                       subsequent_indent="     ")
                                         for code, text in EXIT_MEANINGS.items())


def epilog() -> str:
    return f"{EXAMPLES}\n\n{profiles_text()}\n\n{exit_text()}"
