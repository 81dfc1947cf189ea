"""ACL 2.0 authentication of gRPC calls (5.3.0+ proxies with ``authenticationEnabled``).

A 5.x SDK signs every call with two metadata entries: ``x-mq-date-time`` (``yyyyMMdd'T'HHmmss'Z'``) and
``authorization`` = ``MQv2-HMAC-SHA1 Credential=<ak>, SignedHeaders=x-mq-date-time, Signature=<hex>``, the
signature being HmacSHA1 of the date-time text alone, keyed with the secret, in hexadecimal (the Java and
Node SDKs write it in upper case, Go and Python in lower case; the Go SDK writes
``Credential=<ak>//Rocketmq``).
The proxy takes the user name from the credential before the first ``/``, decodes the hex (either case),
and checks it as the remoting side checks a Signature, with the same users and the same refusals, but
answers them with the gRPC code UNAUTHORIZED; the date-time is not checked for freshness.
"""

from __future__ import annotations

from rocketmq_spec.spec.clauses import Level, clause

_AUTH = "auth/src/main/java/org/apache/rocketmq/auth/authentication/"
_PROXY = "proxy/src/main/java/org/apache/rocketmq/proxy/grpc/"

AUTHORIZATION = "authorization"
DATE_TIME = "x-mq-date-time"
DATE_TIME_FORMAT = "%Y%m%dT%H%M%SZ"
"""``yyyyMMdd'T'HHmmss'Z'`` (the Java SDK's ``Signature.DATE_TIME_FORMAT``)."""
ALGORITHM = "MQv2-HMAC-SHA1"
CREDENTIAL = "Credential"
SIGNED_HEADERS = "SignedHeaders"
SIGNATURE = "Signature"
CREDENTIAL_SEPARATOR = "/"
"""Only the part of the credential before it is the user name (Go writes ``AK//Rocketmq``)."""
AUTHORIZATION_AK = "x-mq-authorization-ak"
"""``GrpcConstants.AUTHORIZATION_AK``: where the proxy's authentication leaves the user it authenticated
for authorization to read (``AuthenticationPipeline.newContext``, put only if absent)."""
DATE_TIME_MISSING = "datetime is null."
"""``DefaultAuthenticationContextBuilder``: an authorization without ``x-mq-date-time``."""

RMQ_GRPC_AUTHENTICATE = clause(
    "RMQ-GRPC-AUTHENTICATE", Level.MUST,
    "With authenticationEnabled a proxy refuses a call (unless its request's full name, such as "
    "apache.rocketmq.v2.QueryRouteRequest, is in authenticationWhitelist) with status UNAUTHORIZED (40100) "
    "and the remoting side's message: no authorization metadata \"username cannot be null.\", authorization "
    "without x-mq-date-time \"datetime is null.\", an unknown user \"User:<name> is not found.\", a disabled "
    "one \"User:<name> is disabled.\", a Signature (hex, either case) that is not HmacSHA1 of the "
    "x-mq-date-time value keyed with the user's password \"check signature failed.\". The user is the "
    "Credential up to its first '/'.",
    source=_AUTH + "builder/DefaultAuthenticationContextBuilder.java (build(Metadata, GeneratedMessageV3)); "
           + _AUTH + "chain/DefaultAuthenticationHandler.java; " + _PROXY + "v2/common/ResponseBuilder.java "
           "(buildStatus: AuthenticationException -> UNAUTHORIZED)",
)
