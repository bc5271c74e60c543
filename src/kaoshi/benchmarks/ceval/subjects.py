"""The 52 C-Eval subjects: handle -> (English name, Chinese name, category), and C-Eval Hard."""

from __future__ import annotations

from kaoshi.benchmarks.common.ceval_layout import CevalSubject as CevalSubject
from kaoshi.results.metrics import CATEGORY_ORDER

CEVAL_CATEGORIES = CATEGORY_ORDER

CEVAL_SUBJECTS: dict[str, CevalSubject] = {
    "computer_network": CevalSubject("Computer Network", "计算机网络", "STEM"),
    "operating_system": CevalSubject("Operating System", "操作系统", "STEM"),
    "computer_architecture": CevalSubject("Computer Architecture", "计算机组成", "STEM"),
    "college_programming": CevalSubject("College Programming", "大学编程", "STEM"),
    "college_physics": CevalSubject("College Physics", "大学物理", "STEM"),
    "college_chemistry": CevalSubject("College Chemistry", "大学化学", "STEM"),
    "advanced_mathematics": CevalSubject("Advanced Mathematics", "高等数学", "STEM"),
    "probability_and_statistics": CevalSubject("Probability and Statistics", "概率统计", "STEM"),
    "discrete_mathematics": CevalSubject("Discrete Mathematics", "离散数学", "STEM"),
    "electrical_engineer": CevalSubject("Electrical Engineer", "注册电气工程师", "STEM"),
    "metrology_engineer": CevalSubject("Metrology Engineer", "注册计量师", "STEM"),
    "high_school_mathematics": CevalSubject("High School Mathematics", "高中数学", "STEM"),
    "high_school_physics": CevalSubject("High School Physics", "高中物理", "STEM"),
    "high_school_chemistry": CevalSubject("High School Chemistry", "高中化学", "STEM"),
    "high_school_biology": CevalSubject("High School Biology", "高中生物", "STEM"),
    "middle_school_mathematics": CevalSubject("Middle School Mathematics", "初中数学", "STEM"),
    "middle_school_biology": CevalSubject("Middle School Biology", "初中生物", "STEM"),
    "middle_school_physics": CevalSubject("Middle School Physics", "初中物理", "STEM"),
    "middle_school_chemistry": CevalSubject("Middle School Chemistry", "初中化学", "STEM"),
    "veterinary_medicine": CevalSubject("Veterinary Medicine", "兽医学", "STEM"),
    "college_economics": CevalSubject("College Economics", "大学经济学", "Social Science"),
    "business_administration": CevalSubject("Business Administration", "工商管理", "Social Science"),
    "marxism": CevalSubject("Marxism", "马克思主义基本原理", "Social Science"),
    "mao_zedong_thought": CevalSubject(
        "Mao Zedong Thought", "毛泽东思想和中国特色社会主义理论体系概论", "Social Science"
    ),
    "education_science": CevalSubject("Education Science", "教育学", "Social Science"),
    "teacher_qualification": CevalSubject("Teacher Qualification", "教师资格", "Social Science"),
    "high_school_politics": CevalSubject("High School Politics", "高中政治", "Social Science"),
    "high_school_geography": CevalSubject("High School Geography", "高中地理", "Social Science"),
    "middle_school_politics": CevalSubject("Middle School Politics", "初中政治", "Social Science"),
    "middle_school_geography": CevalSubject("Middle School Geography", "初中地理", "Social Science"),
    "modern_chinese_history": CevalSubject("Modern Chinese History", "近代史纲要", "Humanities"),
    "ideological_and_moral_cultivation": CevalSubject(
        "Ideological and Moral Cultivation", "思想道德修养与法律基础", "Humanities"
    ),
    "logic": CevalSubject("Logic", "逻辑学", "Humanities"),
    "law": CevalSubject("Law", "法学", "Humanities"),
    "chinese_language_and_literature": CevalSubject(
        "Chinese Language and Literature", "中国语言文学", "Humanities"
    ),
    "art_studies": CevalSubject("Art Studies", "艺术学", "Humanities"),
    "professional_tour_guide": CevalSubject("Professional Tour Guide", "导游资格", "Humanities"),
    "legal_professional": CevalSubject("Legal Professional", "法律职业资格", "Humanities"),
    "high_school_chinese": CevalSubject("High School Chinese", "高中语文", "Humanities"),
    "high_school_history": CevalSubject("High School History", "高中历史", "Humanities"),
    "middle_school_history": CevalSubject("Middle School History", "初中历史", "Humanities"),
    "civil_servant": CevalSubject("Civil Servant", "公务员", "Other"),
    "sports_science": CevalSubject("Sports Science", "体育学", "Other"),
    "plant_protection": CevalSubject("Plant Protection", "植物保护", "Other"),
    "basic_medicine": CevalSubject("Basic Medicine", "基础医学", "Other"),
    "clinical_medicine": CevalSubject("Clinical Medicine", "临床医学", "Other"),
    "urban_and_rural_planner": CevalSubject("Urban and Rural Planner", "注册城乡规划师", "Other"),
    "accountant": CevalSubject("Accountant", "注册会计师", "Other"),
    "fire_engineer": CevalSubject("Fire Engineer", "注册消防工程师", "Other"),
    "environmental_impact_assessment_engineer": CevalSubject(
        "Environmental Impact Assessment Engineer", "环境影响评价工程师", "Other"
    ),
    "tax_accountant": CevalSubject("Tax Accountant", "税务师", "Other"),
    "physician": CevalSubject("Physician", "医师资格", "Other"),
}

CEVAL_HARD_SUBJECTS = (
    "advanced_mathematics",
    "discrete_mathematics",
    "probability_and_statistics",
    "college_chemistry",
    "college_physics",
    "high_school_mathematics",
    "high_school_chemistry",
    "high_school_physics",
)
