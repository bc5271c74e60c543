"""CMMLU's 67 subjects (`src/categories.py` of haonan-li/CMMLU): handle -> Chinese name (as `name_en2zh`
has it, the name its prompt shows), category, and whether it also counts as China-specific.

categories.py maps each subject to subcategories and those to categories: STEM 17, Humanities 13, Social
Science 22, Other 15, and "China specific" for 15 subjects that also belong to one of the four."""

from __future__ import annotations

from typing import NamedTuple


class CmmluSubject(NamedTuple):
    chinese: str
    category: str  # STEM, Humanities, Social Science or Other
    china_specific: bool = False


STEM, HUMANITIES, SOCIAL, OTHER = "STEM", "Humanities", "Social Science", "Other"
CHINA_SPECIFIC = "China-specific"  # the leaderboard's column; categories.py spells it "China specific"
CMMLU_CATEGORIES = (STEM, HUMANITIES, SOCIAL, OTHER)
CMMLU_COLUMNS = (*CMMLU_CATEGORIES, CHINA_SPECIFIC)


def _s(chinese: str, category: str, china_specific: bool = False) -> CmmluSubject:
    return CmmluSubject(chinese, category, china_specific)


CMMLU_SUBJECTS: dict[str, CmmluSubject] = {
    "agronomy": _s("农学", OTHER),
    "anatomy": _s("解剖学", STEM),
    "ancient_chinese": _s("古汉语", SOCIAL, True),
    "arts": _s("艺术学", HUMANITIES),
    "astronomy": _s("天文学", STEM),
    "business_ethics": _s("商业伦理", SOCIAL),
    "chinese_civil_service_exam": _s("中国公务员考试", SOCIAL, True),
    "chinese_driving_rule": _s("中国驾驶规则", OTHER, True),
    "chinese_food_culture": _s("中国饮食文化", SOCIAL, True),
    "chinese_foreign_policy": _s("中国外交政策", SOCIAL, True),
    "chinese_history": _s("中国历史", HUMANITIES, True),
    "chinese_literature": _s("中国文学", HUMANITIES, True),
    "chinese_teacher_qualification": _s("中国教师资格", SOCIAL, True),
    "clinical_knowledge": _s("临床知识", OTHER),
    "college_actuarial_science": _s("大学精算学", STEM),
    "college_education": _s("大学教育学", SOCIAL),
    "college_engineering_hydrology": _s("大学工程水文学", STEM),
    "college_law": _s("大学法律", HUMANITIES),
    "college_mathematics": _s("大学数学", STEM),
    "college_medical_statistics": _s("大学医学统计", STEM),
    "college_medicine": _s("大学医学", OTHER),
    "computer_science": _s("计算机科学", STEM),
    "computer_security": _s("计算机安全", OTHER),
    "conceptual_physics": _s("概念物理学", STEM),
    "construction_project_management": _s("建设工程管理", OTHER, True),
    "economics": _s("经济学", SOCIAL),
    "education": _s("教育学", SOCIAL),
    "electrical_engineering": _s("电气工程", STEM),
    "elementary_chinese": _s("小学语文", SOCIAL, True),
    "elementary_commonsense": _s("小学常识", OTHER, True),
    "elementary_information_and_technology": _s("小学信息技术", OTHER),
    "elementary_mathematics": _s("初等数学", STEM),
    "ethnology": _s("民族学", SOCIAL, True),
    "food_science": _s("食品科学", OTHER),
    "genetics": _s("遗传学", STEM),
    "global_facts": _s("全球事实", HUMANITIES),
    "high_school_biology": _s("高中生物", STEM),
    "high_school_chemistry": _s("高中化学", STEM),
    "high_school_geography": _s("高中地理", SOCIAL),
    "high_school_mathematics": _s("高中数学", STEM),
    "high_school_physics": _s("高中物理学", STEM),
    "high_school_politics": _s("高中政治", SOCIAL, True),
    "human_sexuality": _s("人类性行为", OTHER),
    "international_law": _s("国际法学", HUMANITIES),
    "journalism": _s("新闻学", SOCIAL),
    "jurisprudence": _s("法理学", HUMANITIES),
    "legal_and_moral_basis": _s("法律与道德基础", OTHER),
    "logical": _s("逻辑学", HUMANITIES),
    "machine_learning": _s("机器学习", STEM),
    "management": _s("管理学", SOCIAL),
    "marketing": _s("市场营销", SOCIAL),
    "marxist_theory": _s("马克思主义理论", HUMANITIES),
    "modern_chinese": _s("现代汉语", SOCIAL, True),
    "nutrition": _s("营养学", OTHER),
    "philosophy": _s("哲学", HUMANITIES),
    "professional_accounting": _s("专业会计", SOCIAL),
    "professional_law": _s("专业法学", HUMANITIES),
    "professional_medicine": _s("专业医学", OTHER),
    "professional_psychology": _s("专业心理学", SOCIAL),
    "public_relations": _s("公共关系", SOCIAL),
    "security_study": _s("安全研究", SOCIAL),
    "sociology": _s("社会学", SOCIAL),
    "sports_science": _s("体育学", OTHER),
    "traditional_chinese_medicine": _s("中医中药", OTHER, True),
    "virology": _s("病毒学", STEM),
    "world_history": _s("世界历史", HUMANITIES),
    "world_religions": _s("世界宗教", HUMANITIES),
}


def cmmlu_membership() -> dict[str, tuple[str, ...]]:
    """Subject -> the leaderboard columns it counts in: its category, and China-specific where it is."""
    return {
        subject: (info.category, CHINA_SPECIFIC) if info.china_specific else (info.category,)
        for subject, info in CMMLU_SUBJECTS.items()
    }
