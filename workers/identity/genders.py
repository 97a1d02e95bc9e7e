"""The words a form's gender answer is written in, per language, each with its source.

Notes: docs/internals/identity.md
"""

from __future__ import annotations

import re
import unicodedata

_NOT_ASCII_LETTER = re.compile(r"[^a-z]+")

# (language, female words, male words, source). Titles and abbreviations sit with the
# nouns: a form that asks "Mr/Mrs" is asking the same question. `_` joins the words of a
# two-word answer (`phụ nữ`), which is matched with its space.
LANGUAGES: tuple[tuple[str, str, str, str], ...] = (
    (
        "English",
        "f female woman women girl fem feminine mrs ms miss madam lady her she",
        "m male man men boy masculine mr mister sir he him",
        "en.wiktionary.org/wiki/female",
    ),
    (
        "Spanish",
        "mujer femenino femenina señora sra srta",
        "hombre masculino varón señor sr",
        "en.wiktionary.org/wiki/mujer",
    ),
    ("Portuguese", "mulher feminino feminina dona senhora", "homem masculino senhor", "en.wiktionary.org/wiki/mulher"),
    (
        "French",
        "femme féminin féminine madame mme mlle mademoiselle",
        "homme masculin monsieur",
        "en.wiktionary.org/wiki/femme",
    ),
    ("Italian", "donna femmina femminile signora", "uomo maschio maschile signore sig", "en.wiktionary.org/wiki/donna"),
    ("German", "w frau weiblich", "mann männlich herr", "en.wiktionary.org/wiki/weiblich"),
    ("Dutch", "vrouw vrouwelijk mevrouw mevr", "mannelijk meneer dhr", "en.wiktionary.org/wiki/vrouw"),
    ("Swedish", "kvinna kvinnlig", "manlig", "en.wiktionary.org/wiki/kvinna"),
    ("Danish", "kvinde kvindelig", "mand mandlig", "en.wiktionary.org/wiki/kvinde"),
    ("Norwegian", "kvinne kvinnelig", "mannlig", "en.wiktionary.org/wiki/kvinne"),
    ("Finnish", "nainen naispuolinen", "mies miespuolinen", "en.wiktionary.org/wiki/nainen"),
    ("Estonian", "naine", "mees", "en.wiktionary.org/wiki/naine"),
    ("Latvian", "sieviete sieviešu", "vīrietis vīriešu", "en.wiktionary.org/wiki/sieviete"),
    ("Lithuanian", "moteris moteriška", "vyras vyriška", "en.wiktionary.org/wiki/moteris"),
    ("Polish", "kobieta kobiecy pani", "mężczyzna męski pan", "en.wiktionary.org/wiki/kobieta"),
    ("Czech", "žena ženské ženský", "muž mužské mužský", "en.wiktionary.org/wiki/žena"),
    ("Slovak", "ženský ženské", "muž mužský mužské", "en.wiktionary.org/wiki/žena"),
    ("Croatian", "ženski žensko", "muškarac muški muško", "en.wiktionary.org/wiki/žena"),
    ("Serbian", "жена женски", "мушкарац мушки", "en.wiktionary.org/wiki/жена"),
    ("Bulgarian", "жена женски", "мъж мъжки", "en.wiktionary.org/wiki/жена"),
    ("Russian", "женщина женский жен ж", "мужчина мужской муж м", "en.wiktionary.org/wiki/женщина"),
    ("Ukrainian", "жінка жіноча", "чоловік чоловіча", "en.wiktionary.org/wiki/жінка"),
    ("Romanian", "femeie feminin", "bărbat masculin", "en.wiktionary.org/wiki/femeie"),
    ("Hungarian", "nő női", "férfi", "en.wiktionary.org/wiki/nő"),
    ("Greek", "γυναίκα θηλυκό θήλυ κυρία", "άνδρας άντρας αρσενικό άρρεν κύριος", "en.wiktionary.org/wiki/γυναίκα"),
    ("Turkish", "kadın bayan", "erkek bay", "en.wiktionary.org/wiki/kadın"),
    ("Arabic", "أنثى انثى أنثي امرأة", "ذكر رجل", "en.wiktionary.org/wiki/أنثى"),
    ("Hebrew", "נקבה אישה אשה", "זכר גבר", "en.wiktionary.org/wiki/נקבה"),
    ("Persian", "زن مونث", "مرد مذکر", "en.wiktionary.org/wiki/زن"),
    ("Urdu", "عورت خاتون", "مرد", "en.wiktionary.org/wiki/عورت"),
    ("Hindi", "महिला स्त्री औरत", "पुरुष पुरूष आदमी", "en.wiktionary.org/wiki/महिला"),
    ("Bengali", "মহিলা নারী", "পুরুষ", "en.wiktionary.org/wiki/নারী"),
    ("Thai", "หญิง เพศหญิง ผู้หญิง", "ชาย เพศชาย ผู้ชาย", "en.wiktionary.org/wiki/หญิง"),
    ("Vietnamese", "nữ phụ_nữ", "nam đàn_ông", "en.wiktionary.org/wiki/nữ"),
    ("Indonesian", "perempuan wanita", "laki-laki pria", "en.wiktionary.org/wiki/perempuan"),
    ("Malay", "perempuan wanita", "lelaki", "en.wiktionary.org/wiki/lelaki"),
    ("Tagalog", "babae", "lalaki", "en.wiktionary.org/wiki/babae"),
    ("Swahili", "mwanamke", "mwanamume mwanaume", "en.wiktionary.org/wiki/mwanamke"),
    ("Chinese", "女 女性 女士", "男 男性 先生", "en.wiktionary.org/wiki/女性"),
    ("Japanese", "女性 女", "男性 男", "en.wiktionary.org/wiki/女性"),
    ("Korean", "여성 여자 여", "남성 남자 남", "en.wiktionary.org/wiki/여성"),
    ("Catalan", "dona", "home", "en.wiktionary.org/wiki/dona"),
    # The official languages of more countries Meta sells ads in.
    ("Hausa", "mace", "namiji", "en.wiktionary.org/wiki/mace#Hausa"),
    ("Yoruba", "obìnrin abo", "ọkùnrin akọ", "en.wiktionary.org/wiki/obìnrin"),
    ("Amharic", "ሴት", "ወንድ", "en.wiktionary.org/wiki/ሴት"),
    ("Sinhala", "ස්ත්‍රී ගැහැණු", "පුරුෂ පිරිමි", "en.wiktionary.org/wiki/ස්ත්‍රී"),
    ("Tamil", "பெண்", "ஆண்", "en.wiktionary.org/wiki/பெண்"),
    ("Uzbek", "ayol аёл", "erkak эркак", "en.wiktionary.org/wiki/ayol"),
    ("Kazakh", "әйел", "еркек", "en.wiktionary.org/wiki/әйел"),
    ("Belarusian", "жанчына жаночы", "мужчына мужчынскі", "en.wiktionary.org/wiki/жанчына"),
    ("Māori", "wahine", "tāne", "en.wiktionary.org/wiki/wahine"),
    ("Irish", "bean baineann", "fear fireann", "en.wiktionary.org/wiki/bean#Irish"),
    ("Mongolian", "эмэгтэй", "эрэгтэй", "en.wiktionary.org/wiki/эмэгтэй"),
    ("Georgian", "ქალი მდედრობითი", "კაცი მამრობითი", "en.wiktionary.org/wiki/ქალი"),
    ("Armenian", "կին իգական", "տղամարդ արական", "en.wiktionary.org/wiki/կին"),
    ("Azerbaijani", "qadın", "kişi", "en.wiktionary.org/wiki/qadın"),
    ("Icelandic", "kona kvenkyns", "karl karlmaður karlkyns", "en.wiktionary.org/wiki/kona"),
    ("Khmer", "ស្រី", "ប្រុស", "en.wiktionary.org/wiki/ស្រី"),
    ("Burmese", "မ အမျိုးသမီး မိန်းမ", "ကျား အမျိုးသား ယောက်ျား", "en.wiktionary.org/wiki/အမျိုးသမီး"),
    ("Lao", "ຍິງ ແມ່ຍິງ ເພດຍິງ", "ຊາຍ ຜູ້ຊາຍ ເພດຊາຍ", "en.wiktionary.org/wiki/ຍິງ"),
    ("Slovenian", "ženska ženski", "moški", "en.wiktionary.org/wiki/ženska"),
    ("Maltese", "mara femminili", "raġel maskili", "en.wiktionary.org/wiki/mara"),
    ("Albanian", "femër grua femëror", "mashkull burrë mashkullor", "en.wiktionary.org/wiki/femër"),
    ("Afrikaans", "vroulik vrou", "manlik", "en.wiktionary.org/wiki/vroulik"),
    ("Somali", "dheddig naag", "lab nin", "en.wiktionary.org/wiki/naag"),
    ("Welsh", "benyw menyw benywaidd", "gwryw dyn gwrywaidd", "en.wiktionary.org/wiki/benyw"),
    ("Nepali", "महिला आइमाई", "पुरुष लोग्ने", "en.wiktionary.org/wiki/महिला"),
    ("Basque", "emakumea emakumezkoa", "gizona gizonezkoa", "en.wiktionary.org/wiki/emakume"),
    ("Galician", "muller", "home", "en.wiktionary.org/wiki/muller"),
    ("Zulu", "owesifazane", "owesilisa", "en.wiktionary.org/wiki/owesifazane"),
    ("Kinyarwanda", "gore umugore", "gabo umugabo", "en.wiktionary.org/wiki/umugore"),
    ("Macedonian", "жена женски", "маж машки", "en.wiktionary.org/wiki/жена"),
    ("Kyrgyz", "аял", "эркек", "en.wiktionary.org/wiki/аял"),
    ("Tajik", "зан", "мард", "en.wiktionary.org/wiki/зан"),
    ("Pashto", "ښځه", "نارینه سړی", "en.wiktionary.org/wiki/ښځه"),
    ("Tigrinya", "ሰበይቲ ኣንስቲ", "ሰብኣይ ተባዕታይ", "en.wiktionary.org/wiki/ሰበይቲ"),
    ("Luxembourgish", "weiblech", "männlech", "en.wiktionary.org/wiki/weiblech"),
    # The short forms drop-downs print: Czech, Slovak and Slovenian Ž/M (žena, ženski); the
    # Romance languages' `masc.` and `fem.` (masculino, masculin, maschile).
    ("Short forms", "ž fem", "masc", "en.wiktionary.org/wiki/masc."),
)

# One-letter answers (a drop-down's initials) mean what they abbreviate in the lead's
# country's language; a letter not listed for the country is no answer. Spanish `M` is
# Mujer as often as Masculino; Hungarian `F` is Férfi (male). Countries not listed read
# the letters of the table above (`f`, `m`, `w`). Sources: each word in Wiktionary.
LETTERS: tuple[tuple[str, str, str, str], ...] = (
    ("es mx ar co cl pe ve ec bo py uy gt hn sv ni cr pa cu do pr gq", "f", "h v", "femenino, hombre, varón"),
    ("pl", "k", "m", "kobieta, mężczyzna"),
    ("nl sr", "v", "m", "vrouw, man"),
    ("be", "v f", "m", "vrouw, femme, man, masculin"),
    ("dk no se", "k", "m", "kvinde, kvinne, kvinna, mand, mann, man"),
    ("fi", "n", "m", "nainen, mies"),
    ("tr", "k", "e", "kadın, erkek"),
    ("hu", "n", "f", "nő, férfi"),
    ("de at ch li lu", "w f", "m", "weiblich, männlich"),
    ("id my bn", "p w", "l", "perempuan, wanita, laki-laki"),
    ("cz sk si hr rs ba me", "ž z", "m", "žena, muž, moški"),
    ("ru ua by bg kz kg mk", "ж", "м", "женский, мужской"),
)
_LETTERS = {
    country: {letter: code for code, letters in (("f", female), ("m", male)) for letter in letters.split()}
    for countries, female, male, _words in LETTERS
    for country in countries.split()
}

# Unmarked forms that are other answers: these words match only as written.
_OTHER_ANSWERS = frozenset({"no"})


def _written(text: str) -> str:
    """Lowercase, letters and marks only, composed: `Ms.` → `ms`, `Nữ` → `nữ`."""
    if text.isascii():
        return _NOT_ASCII_LETTER.sub("", text.lower())
    return "".join(ch for ch in unicodedata.normalize("NFC", text.lower()) if unicodedata.category(ch)[0] in "LM")


def _unmarked(text: str) -> str:
    """`_written` without accents or vowel marks: `Männlich` → `mannlich`."""
    if text.isascii():
        return _NOT_ASCII_LETTER.sub("", text.lower())
    return "".join(ch for ch in unicodedata.normalize("NFKD", text.lower()) if unicodedata.category(ch)[0] == "L")


def _tables() -> tuple[dict[str, str], dict[str, str]]:
    written: dict[str, str] = {}
    unmarked: dict[str, str] = {}
    for _language, female, male, _source in LANGUAGES:
        for code, words in (("f", female), ("m", male)):
            for word in words.split():
                _put(written, _written(word), code)
                if _unmarked(word) not in _OTHER_ANSWERS:
                    _put(unmarked, _unmarked(word), code)
    return written, unmarked


def _put(table: dict[str, str], key: str, code: str) -> None:
    # A word that means female in one language and male in another is no answer at all:
    # the table refuses to load rather than let one language win.
    if table.setdefault(key, code) != code:
        raise ValueError(f"gender word {key!r} is both f and m")


WRITTEN, UNMARKED = _tables()


def code_of(answer: str, country: str | None = None) -> str | None:
    """`f`, `m`, or None for an answer that is not a listed word; one letter is read in
    the language of `country` (alpha-2) where LETTERS lists it."""
    written = _written(answer)
    if len(written) == 1 and country in _LETTERS:
        return _LETTERS[country].get(written)
    return WRITTEN.get(written) or UNMARKED.get(_unmarked(answer))
