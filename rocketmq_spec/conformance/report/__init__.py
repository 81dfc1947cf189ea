"""Report writers: a console summary, JSON files, JUnit XML and a static HTML case matrix."""
