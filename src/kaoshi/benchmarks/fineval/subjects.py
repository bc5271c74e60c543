"""FinEval's 34 subjects (`subject_mapping.json` of SUFE-AIFLM-Lab/FinEval, subject -> [en, zh,
category]): handle -> (English name, Chinese name, category), in the file's order.

The file's English entry is the handle itself ('tax_law'); the English names here are the handle in words,
for plots and tables. The Chinese names are the file's: C-Eval's header shows them (会计, not 会计学)."""

from __future__ import annotations

from kaoshi.benchmarks.common.ceval_layout import CevalSubject

FINANCE, ECONOMY, ACCOUNTING, CERTIFICATE = "Finance", "Economy", "Accounting", "Certificate"
FINEVAL_CATEGORIES = (FINANCE, ECONOMY, ACCOUNTING, CERTIFICATE)


def _s(handle: str, chinese: str, category: str) -> tuple[str, CevalSubject]:
    english = " ".join(word.capitalize() for word in handle.split("_"))
    return handle, CevalSubject(english, chinese, category)


FINEVAL_SUBJECTS: dict[str, CevalSubject] = dict(
    [
        _s("accounting", "会计", ACCOUNTING),
        _s("advanced_financial_accounting", "高级财务会计", ACCOUNTING),
        _s("auditing", "审计学", ACCOUNTING),
        _s("corporate_strategy_and_risk_management", "公司战略与风险管理", ACCOUNTING),
        _s("cost_accounting", "成本会计学", ACCOUNTING),
        _s("economic_law", "经济法", ACCOUNTING),
        _s("financial_management", "财务管理学", ACCOUNTING),
        _s("intermediate_financial_accounting", "中级财务会计", ACCOUNTING),
        _s("management_accounting", "管理会计学", ACCOUNTING),
        _s("tax_law", "税法", ACCOUNTING),
        _s("banking_practitioner_qualification_certificate", "银行从业资格证", CERTIFICATE),
        _s("certified_management_accountant", "管理会计师", CERTIFICATE),
        _s("certified_practising_accountant", "注册会计师", CERTIFICATE),
        _s("china_actuary", "中国精算师", CERTIFICATE),
        _s("fund_qualification_certificate", "基金从业资格证", CERTIFICATE),
        _s("futures_practitioner_qualification_certificate", "期货从业资格证", CERTIFICATE),
        _s("securities_practitioner_qualification_certificate", "证券从业资格证", CERTIFICATE),
        _s("econometrics", "计量经济学", ECONOMY),
        _s("international_economics", "国际经济学", ECONOMY),
        _s("macroeconomics", "宏观经济学", ECONOMY),
        _s("microeconomics", "微观经济学", ECONOMY),
        _s("political_economy", "政治经济学", ECONOMY),
        _s("public_finance", "财政学", ECONOMY),
        _s("statistics", "统计学", ECONOMY),
        _s("central_banking", "中央银行学", FINANCE),
        _s("commercial_bank_finance", "商业银行金融学", FINANCE),
        _s("corporate_finance", "公司金融学", FINANCE),
        _s("finance", "金融学", FINANCE),
        _s("financial_engineering", "金融工程学", FINANCE),
        _s("financial_markets", "金融市场学", FINANCE),
        _s("insurance", "保险学", FINANCE),
        _s("international_finance", "国际金融学", FINANCE),
        _s("investments", "投资学", FINANCE),
        _s("monetary_finance", "货币金融学", FINANCE),
    ]
)
