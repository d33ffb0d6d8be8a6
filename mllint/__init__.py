__version__ = "0.1.0"
# Where the repository is published: OWNER is a placeholder until then (RELEASING.md).
REPOSITORY_URL = "https://github.com/OWNER/mllint"
ISSUES_URL = f"{REPOSITORY_URL}/issues"
