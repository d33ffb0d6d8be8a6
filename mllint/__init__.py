import os

__version__ = "0.1.0"
# Where the repository is published: OWNER is a placeholder until then (RELEASING.md). mllint prints it nowhere.
REPOSITORY_URL = "https://github.com/OWNER/mllint"
# Where the rule reference (docs/rules/) is served, the rule pages being DOCS_URL/ml101.md: the one setting
# that puts links in mllint's output (JSON `url`, SARIF `helpUri`, the editor's code link and hover). Empty,
# no link is printed: nothing may point at a page that does not exist. Set at release (RELEASING.md), or
# by the environment variable MLLINT_DOCS_URL.
DOCS_URL = os.environ.get("MLLINT_DOCS_URL", "")
