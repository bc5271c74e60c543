"""M3KE's 71 tasks and their clusters, as `subject_cluster.mapping.json` of tjunlp-lab/M3KE lists them.

A task is a data file's name without `.jsonl`: `{Subject}-{Cluster}-{Level}`. The file names say `Other`
where the mapping (and the paper) say `Others`; one file name is cut short (`High schoo`): both as
published, since they are the task names. One task's test file has another name than its dev file and the
mapping (`TASK_ALIASES`): both name the one task."""

from __future__ import annotations

ARTS, SOCIAL, NATURAL, OTHERS = "Arts & Humanities", "Social Sciences", "Natural Sciences", "Others"
M3KE_CLUSTERS = (ARTS, SOCIAL, NATURAL, OTHERS)
# A file name's Cluster part -> the cluster; the mapping file's names are the clusters themselves.
CLUSTER_OF_FILE_PART = {ARTS: ARTS, SOCIAL: SOCIAL, NATURAL: NATURAL, "Other": OTHERS, OTHERS: OTHERS}
MAPPING_FILE = "subject_cluster.mapping.json"

_TASKS_BY_CLUSTER: dict[str, tuple[str, ...]] = {
    ARTS: (
        "Chinese-Arts & Humanities-High school",
        "Chinese-Arts & Humanities-Junior high school",
        "Chinese-Arts & Humanities-Primary school",
        "Dance-Arts & Humanities-Other",
        "Film-Arts & Humanities-Other",
        "Fine Arts-Arts & Humanities-Other",
        "History Foundation-Arts & Humanities-College",
        "History-Arts & Humanities-High school",
        "History-Arts & Humanities-Junior high school",
        "Modern History-Arts & Humanities-College",
        "Modern World History-Arts & Humanities-College",
        "Music-Arts & Humanities-Other",
    ),
    SOCIAL: (
        "Basic Principle of Marxism-Social Sciences-College",
        "Chinese Constitutional Law-Social Sciences-College",
        "Civil Law-Social Sciences-College",
        "Criminal Jurisprudence-Social Sciences-College",
        "Current Affairs and Politics-Social Sciences-College",
        "Developmental and Educational Psychology-Social Sciences-College",
        "Educational Research Methods-Social Sciences-College",
        "Experimental Psychology-Social Sciences-College",
        "History of Chinese Education-Social Sciences-College",
        "History of Foreign Education-Social Sciences-College",
        "History of the Chinese Legal System-Social Sciences-College",
        "Introduction to Mao Tsetung Thoughts-Social Sciences-College",
        "Introduction to Psychology-Social Sciences-College",
        "Jurisprudence-Social Sciences-College",
        "Moral Cultivation-Social Sciences-College",
        "Outline of Chinese Modern History-Social Sciences-College",
        "Politics-Social Sciences-High school",
        "Politics-Social Sciences-Junior high school",
        "Principles of Pedagogy-Social Sciences-College",
        "Psychology of Teaching-Social Sciences-College",
        "Sociology-Social Sciences-College",
    ),
    NATURAL: (
        "Advanced Mathematics-Natural Sciences-College",
        "Animal Physiology-Natural Sciences-College",
        "Anthropotomy-Natural Sciences-College",
        "Biochemistry and Pathology-Natural Sciences-College",
        "Biochemistry-Natural Sciences-College",
        "Biology-Natural Sciences-High school",
        "Biology-Natural Sciences-Junior high school",
        "Chemistry-Natural Sciences-High school",
        "Chemistry-Natural Sciences-Junior high school",
        "Computer Fundamentals-Natural Sciences-Other",
        "Computer Networks-Natural Sciences-College",
        "Computer Programming Language-Natural Sciences-Other",
        "Data Structures-Natural Sciences-College",
        "Geography-Natural Sciences-High school",
        "Geography-Natural Sciences-Junior high school",
        "Humanistic Medicine-Natural Sciences-College",
        "Immunology-Natural Sciences-College",
        "Internal Medicine-Natural Sciences-College",
        "Linear Algebra-Natural Sciences-College",
        "Math-Natural Sciences-High school",
        "Math-Natural Sciences-Junior high school",
        "Math-Natural Sciences-Primary school",
        "Operating Systems-Natural Sciences-College",
        "Pharmacology-Natural Sciences-College",
        "Physics-Natural Sciences-High schoo",
        "Physics-Natural Sciences-Junior high school",
        "Physiology-Natural Sciences-College",
        "Principles of Computer Composition-Natural Sciences-College",
        "Probability Theory-Natural Sciences-College",
        "Stomatology-Natural Sciences-College",
        "Surgical Sciences-Natural Sciences-College",
    ),
    OTHERS: (
        "Management-Other-College",
        "Economics-Other-College",
        "Chinese Medicine-Other-Other",
        "Ancient Chinese Language-Other-Other",
        "Novels-Other-Other",
        "Religion-Other-Other",
        "Chinese Civil Service Examination-Other-Other",
    ),
}
M3KE_TASKS: dict[str, str] = {task: cluster for cluster, tasks in _TASKS_BY_CLUSTER.items() for task in tasks}
# Another published file name -> the task it holds: the test file of Management-Other-College (its dev
# file's and the mapping's name) is named as if Management were a natural science.
TASK_ALIASES = {"Management-Natural Sciences-College": "Management-Other-College"}


def task_of_file(name: str) -> str:
    """The task a data file named `name` (without `.jsonl`) holds."""
    return TASK_ALIASES.get(name, name)


def file_names_of_task(task: str) -> tuple[str, ...]:
    """The names a data file of `task` is published under: its own first, then its aliases."""
    return (task, *(alias for alias, aliased in TASK_ALIASES.items() if aliased == task))


def task_parts(task: str) -> tuple[str, str, str] | None:
    """(subject, cluster part, level) of a `{Subject}-{Cluster}-{Level}` task name; None for another name.
    Subjects hold no '-', clusters and levels neither, so the last two '-' split it."""
    parts = task.rsplit("-", 2)
    if len(parts) != 3 or not all(part.strip() for part in parts):
        return None
    subject, cluster, level = parts
    return subject, cluster, level
