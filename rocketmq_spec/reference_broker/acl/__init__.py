"""ACL 1.0 on the reference broker: plain_acl.yml, the check at dispatch and the ACL admin commands."""
