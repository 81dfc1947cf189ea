"""ACL 2.0 on the reference broker (5.3.0+): the user and ACL tables and the AUTH_* admin commands."""
