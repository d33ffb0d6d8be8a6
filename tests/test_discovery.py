"""Which files get linted: `*.py`, `*.pyi` and `*.ipynb` below the named directories, minus the default-excluded
directories, `exclude`/`extend-exclude` and `.gitignore`d paths; explicitly named files unless
`force-exclude` is set."""
import os
from pathlib import Path

import pytest

from mllint.config import Resolver, parse_table
from mllint.discovery import discover


@pytest.fixture
def project(tmp_path, monkeypatch):
    """An empty project directory, made the working directory (so discovered paths are relative)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(root: Path, *paths: str, text: str = "x = 1\n") -> None:
    for relative in paths:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def files(*paths: str, **settings) -> list[str]:
    """What `discover` finds for `paths` (default `.`), with `settings` as configuration keys
    (`respect_gitignore=False` is `respect-gitignore = false`) and no configuration file."""
    table = {key.replace("_", "-"): value for key, value in settings.items()}
    resolver = Resolver(parse_table(table, "test"), isolated=True)
    return discover(list(paths) or ["."], resolver)


def test_python_sources_stubs_and_notebooks_are_found_and_nothing_else(project):
    write(project, "a.py", "b.pyi", "pkg/c.py", "notes.txt", "data.json", "script", "d.pyc", "e.py.bak", "f.pyw",
          "g.ipynb", ".ipynb_checkpoints/g-checkpoint.ipynb")  # fmt: skip
    assert files() == ["a.py", "b.pyi", "g.ipynb", "pkg/c.py"]


def test_a_directory_named_like_a_source_file_is_walked_not_linted(project):
    write(project, "looks_like.py/inner.py")
    assert files() == ["looks_like.py/inner.py"]


@pytest.mark.parametrize(
    "directory",
    [".git", ".venv", "venv", "build", "dist", "site-packages", "__pycache__", "mllint_torch.egg-info",
     "node_modules", ".tox", ".mypy_cache", ".mllint_cache"],
)
def test_default_excluded_directories_are_skipped(project, directory):
    write(project, "kept.py", f"{directory}/skipped.py", f"pkg/{directory}/skipped_too.py")
    assert files() == ["kept.py"]


def test_default_excluded_names_only_match_whole_names(project):
    write(project, "builder/a.py", "distance.py", "my_venv/b.py")
    assert files() == ["builder/a.py", "distance.py", "my_venv/b.py"]


def test_extend_exclude_adds_to_the_default_list(project):
    write(project, "src/a.py", "experiments/old/b.py", "experiments/new/c.py", "build/d.py", "src/legacy_x.py")
    assert files(extend_exclude=["experiments/old", "legacy_*.py"]) == ["experiments/new/c.py", "src/a.py"]


def test_exclude_replaces_the_default_list(project):
    write(project, "build/a.py", "generated/b.py", "c.py")
    assert files(exclude=["generated"]) == ["build/a.py", "c.py"]


def test_extend_exclude_from_a_configuration_file_is_relative_to_that_file(project):
    (project / "mllint.toml").write_text('extend-exclude = ["experiments/old"]\n')
    write(project, "experiments/old/a.py", "experiments/new/b.py")
    assert discover([str(project / "experiments")], Resolver({})) == [str(project / "experiments/new/b.py")]


# .gitignore


def test_gitignore_plain_name_matches_at_any_depth(project):
    (project / ".gitignore").write_text("secret.py\n")
    write(project, "secret.py", "pkg/secret.py", "public.py", "pkg/not_secret.py")
    assert files() == ["pkg/not_secret.py", "public.py"]


def test_gitignore_trailing_slash_matches_directories_only(project):
    (project / ".gitignore").write_text("out/\nlogs.py/\n")
    write(project, "out/a.py", "pkg/out/b.py", "logs.py", "c.py")
    assert files() == ["c.py", "logs.py"]


def test_gitignore_leading_slash_anchors_to_its_directory(project):
    (project / ".gitignore").write_text("/top.py\n/gen\n")
    write(project, "top.py", "pkg/top.py", "gen/a.py", "pkg/gen/b.py")
    assert files() == ["pkg/gen/b.py", "pkg/top.py"]


def test_gitignore_pattern_with_a_middle_slash_is_anchored(project):
    (project / ".gitignore").write_text("pkg/generated.py\n")
    write(project, "pkg/generated.py", "other/pkg/generated.py")
    assert files() == ["other/pkg/generated.py"]


def test_gitignore_double_star_matches_at_any_depth(project):
    (project / ".gitignore").write_text("**/cache\nlogs/**\n")
    write(project, "cache/a.py", "pkg/deep/cache/b.py", "logs/c.py", "pkg/logs/d.py", "e.py")
    assert files() == ["e.py", "pkg/logs/d.py"]


def test_gitignore_negation_re_includes_a_file(project):
    (project / ".gitignore").write_text("*.py\n!keep.py\n")
    write(project, "a.py", "keep.py", "pkg/b.py", "pkg/keep.py", "stub.pyi")
    assert files() == ["keep.py", "pkg/keep.py", "stub.pyi"]


def test_gitignore_comments_and_blank_lines_are_not_patterns(project):
    (project / ".gitignore").write_text("# a.py\n\n   \nb.py\n")
    write(project, "a.py", "b.py")
    assert files() == ["a.py"]


def test_nested_gitignore_applies_below_its_directory_only(project):
    write(project, "pkg/.gitignore", text="local.py\n/anchored.py\n")
    write(project, "local.py", "anchored.py", "pkg/local.py", "pkg/anchored.py", "pkg/sub/local.py", "pkg/sub/anchored.py")
    assert files() == ["anchored.py", "local.py", "pkg/sub/anchored.py"]


def test_nested_gitignore_can_re_include_what_a_parent_ignores(project):
    (project / ".gitignore").write_text("*_gen.py\n")
    write(project, "pkg/.gitignore", text="!keep_gen.py\n")
    write(project, "a_gen.py", "keep_gen.py", "pkg/a_gen.py", "pkg/keep_gen.py")
    assert files() == ["pkg/keep_gen.py"]


def test_repository_root_gitignore_applies_when_linting_a_subdirectory(project):
    (project / ".git").mkdir()
    (project / ".gitignore").write_text("ignored.py\n/src/generated/\n")
    write(project, "src/a.py", "src/ignored.py", "src/generated/b.py", "src/pkg/generated/c.py")
    assert files("src") == ["src/a.py", "src/pkg/generated/c.py"]


def test_gitignore_above_the_repository_root_does_not_apply(project):
    (project / ".gitignore").write_text("a.py\n")
    (project / "repo/.git").mkdir(parents=True)
    write(project, "repo/src/a.py", "repo/src/b.py")
    assert files("repo/src") == ["repo/src/a.py", "repo/src/b.py"]


def test_gitignore_of_a_parent_directory_needs_a_repository_to_apply(project):
    (project / ".gitignore").write_text("a.py\n")
    write(project, "src/a.py")
    assert files("src") == ["src/a.py"]


def test_respect_gitignore_false_lints_ignored_files(project):
    (project / ".gitignore").write_text("ignored.py\nout/\n")
    write(project, "ignored.py", "out/a.py", "b.py")
    assert files(respect_gitignore=False) == ["b.py", "ignored.py", "out/a.py"]


def test_respect_gitignore_false_in_a_configuration_file(project):
    (project / "mllint.toml").write_text("respect-gitignore = false\n")
    (project / ".gitignore").write_text("ignored.py\n")
    write(project, "ignored.py")
    assert discover(["."], Resolver({})) == ["ignored.py"]


# Explicitly named paths.


def test_explicitly_named_excluded_and_ignored_files_are_linted(project):
    (project / ".gitignore").write_text("ignored.py\n")
    write(project, "ignored.py", "build/built.py")
    assert files("ignored.py", "build/built.py") == ["ignored.py", "build/built.py"]


def test_force_exclude_skips_explicitly_named_excluded_and_ignored_files(project):
    (project / ".gitignore").write_text("ignored.py\n")
    write(project, "ignored.py", "build/built.py", "kept.py")
    assert files("ignored.py", "build/built.py", "kept.py", force_exclude=True) == ["kept.py"]


def test_force_exclude_skips_a_file_in_a_gitignored_directory(project):
    (project / ".git").mkdir()
    (project / ".gitignore").write_text("generated/\n")
    write(project, "generated/a.py", "kept.py")
    assert files("generated/a.py", "kept.py", force_exclude=True) == ["kept.py"]


def test_force_exclude_applies_extend_exclude_to_named_files(project):
    write(project, "experiments/old/a.py", "b.py")
    assert files("experiments/old/a.py", "b.py", extend_exclude=["experiments/old"], force_exclude=True) == ["b.py"]


def test_explicitly_named_directory_inside_an_excluded_one_is_walked(project):
    write(project, "build/lib/a.py")
    assert files("build/lib") == ["build/lib/a.py"]


def test_force_exclude_skips_explicitly_named_excluded_and_ignored_directories(project):
    (project / ".gitignore").write_text("generated/\n")
    write(project, "build/lib/a.py", "generated/b.py", "src/c.py")
    assert files("build/lib", "generated", "src", force_exclude=True) == ["src/c.py"]


def test_force_exclude_keeps_a_file_re_included_by_a_negation(project):
    (project / ".git").mkdir()
    (project / ".gitignore").write_text("*_gen.py\n!keep_gen.py\n")
    write(project, "pkg/a_gen.py", "pkg/keep_gen.py")
    assert files("pkg/a_gen.py", "pkg/keep_gen.py", force_exclude=True) == ["pkg/keep_gen.py"]


def test_force_exclude_without_respect_gitignore_keeps_ignored_files(project):
    (project / ".gitignore").write_text("ignored.py\n")
    write(project, "ignored.py")
    assert files("ignored.py", force_exclude=True, respect_gitignore=False) == ["ignored.py"]


def test_a_missing_path_is_kept_so_that_it_is_reported(project):
    write(project, "a.py")
    assert files("missing.py", "a.py") == ["missing.py", "a.py"]


# Order and robustness.


def test_order_is_sorted_by_path_components_whatever_the_creation_order(project):
    write(project, "z.py", "b/z.py", "a.py", "b/a/x.py", "b.py", "A.py", "b/a.py")
    assert files() == ["A.py", "a.py", "b/a/x.py", "b/a.py", "b/z.py", "b.py", "z.py"]


def test_named_paths_keep_their_order_and_duplicates_are_dropped(project):
    write(project, "b/x.py", "a.py")
    assert files("b", "a.py", "b", "a.py") == ["b/x.py", "a.py"]


def test_symlinked_directory_loop_does_not_hang(project):
    write(project, "pkg/a.py")
    os.symlink(project, project / "pkg" / "loop", target_is_directory=True)
    assert files() == ["pkg/a.py"]


def test_symlinked_file_is_linted(project):
    write(project, "real/a.py")
    os.symlink(project / "real" / "a.py", project / "link.py")
    assert files() == ["link.py", "real/a.py"]



def test_symlinked_directory_named_on_the_command_line_is_followed(project):
    write(project, "real/pkg/a.py", "real/pkg/sub/b.py")
    os.symlink(project / "real" / "pkg", project / "link", target_is_directory=True)
    assert files("link") == ["link/a.py", "link/sub/b.py"]
    assert files("link/") == ["link/a.py", "link/sub/b.py"]


def test_gitignore_rules_of_the_repository_a_symlinked_directory_points_into_apply(project):
    """`link -> repo/src`: the repository's root .gitignore and the one inside src/ apply, as git's
    would in the directory itself (and as Ruff applies them)."""
    (project / "repo/.git").mkdir(parents=True)
    (project / "repo/.gitignore").write_text("/src/generated/\n")
    write(project, "repo/src/.gitignore", text="*_pb2.py\n")
    write(project, "repo/src/a.py", "repo/src/generated/b.py", "repo/src/c_pb2.py")
    os.mkdir(project / "work")
    os.symlink(project / "repo" / "src", project / "work" / "link", target_is_directory=True)
    assert files("work/link") == ["work/link/a.py"]
    assert files("work/link/generated/b.py", force_exclude=True) == []


def test_symlinked_directory_found_while_walking_is_not_followed(project):
    write(project, "real/a.py")
    os.mkdir(project / "src")
    os.symlink(project / "real", project / "src" / "link", target_is_directory=True)
    assert files("src") == []


# What git ignores besides `.gitignore` files.


@pytest.fixture
def user_home(tmp_path, monkeypatch):
    """A home directory of the test's own: git's user configuration is read from there."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    return home


@pytest.fixture
def repository(tmp_path, monkeypatch, user_home):
    """A git repository (its `.git` directory holds only what these tests write), the working directory."""
    root = tmp_path / "repo"
    (root / ".git" / "info").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root


def test_info_exclude_of_the_repository_is_honoured(repository):
    (repository / ".git" / "info" / "exclude").write_text("# local\nscratch/\n/top_only.py\n")
    write(repository, "scratch/a.py", "top_only.py", "pkg/top_only.py", "pkg/b.py")
    assert files() == ["pkg/b.py", "pkg/top_only.py"]
    assert files("pkg") == ["pkg/b.py", "pkg/top_only.py"]


def test_a_gitignore_re_includes_what_info_exclude_ignores(repository):
    (repository / ".git" / "info" / "exclude").write_text("*_gen.py\n")
    (repository / "pkg").mkdir()
    (repository / "pkg" / ".gitignore").write_text("!keep_gen.py\n")
    write(repository, "pkg/a_gen.py", "pkg/keep_gen.py")
    assert files() == ["pkg/keep_gen.py"]


def test_default_user_excludes_file_is_honoured(repository, user_home):
    write(user_home, ".config/git/ignore", text="*.ipynb\n")
    write(repository, "a.py", "notes.ipynb")
    assert files() == ["a.py"]


def test_core_excludes_file_of_the_user_configuration_is_honoured(repository, user_home):
    write(user_home, "my-ignores", text="generated/\n")
    write(user_home, ".gitconfig", text='[user]\n\tname = x\n[core]\n\texcludesFile = "~/my-ignores"  ; mine\n')
    write(user_home, ".config/git/ignore", text="a.py\n")  # not read: the configuration names another file
    write(repository, "a.py", "generated/b.py")
    assert files() == ["a.py"]


def test_core_excludes_file_of_the_repository_configuration_wins(repository, user_home, tmp_path):
    write(user_home, ".gitconfig", text="[core]\n\texcludesfile = ~/user-ignores\n")
    write(user_home, "user-ignores", text="a.py\n")
    write(tmp_path, "repo-ignores", text="b.py\n")
    write(repository, ".git/config", text=f"[core]\n\texcludesfile = {tmp_path / 'repo-ignores'}\n")
    write(repository, "a.py", "b.py")
    assert files() == ["a.py"]


def test_git_excludes_apply_inside_a_repository_only(project, user_home):
    write(user_home, ".config/git/ignore", text="a.py\n")
    write(project, "a.py")
    assert files() == ["a.py"]


def test_git_excludes_are_not_read_without_respect_gitignore(repository):
    (repository / ".git" / "info" / "exclude").write_text("a.py\n")
    write(repository, "a.py")
    assert files(respect_gitignore=False) == ["a.py"]


def test_info_exclude_of_a_worktree_is_its_main_repository_s(tmp_path, monkeypatch, user_home):
    main = tmp_path / "main"
    write(main, ".git/info/exclude", text="scratch.py\n")
    write(main, ".git/worktrees/feature/commondir", text="../..\n")
    feature = tmp_path / "feature"
    write(feature, ".git", text=f"gitdir: {main / '.git' / 'worktrees' / 'feature'}\n")
    write(feature, "a.py", "scratch.py")
    monkeypatch.chdir(feature)
    assert files() == ["a.py"]


def test_force_exclude_skips_a_named_file_of_info_exclude(repository):
    (repository / ".git" / "info" / "exclude").write_text("scratch.py\n")
    write(repository, "scratch.py", "a.py")
    assert files("scratch.py", "a.py", force_exclude=True) == ["a.py"]
