import decimal
import email.parser
import xml.dom.minidom

import pytest
from work import loop

DOCUMENT = "<root>" + "".join(f"<item n='{i}'>{i * 3}</item>" for i in range(400)) + "</root>"
MESSAGE = "From: a@example.org\nTo: b@example.org\nSubject: s\n\n" + "body line\n" * 200


@pytest.mark.parametrize("times", [5, 15, 40, 100], ids=lambda t: f"xml_{t}")
def test_parse_xml(times):
    for _ in range(times):
        assert len(xml.dom.minidom.parseString(DOCUMENT).getElementsByTagName("item")) == 400


@pytest.mark.parametrize("times", [50, 150, 400, 1000], ids=lambda t: f"mail_{t}")
def test_parse_mail(times):
    for _ in range(times):
        assert email.parser.Parser().parsestr(MESSAGE)["Subject"] == "s"


@pytest.mark.parametrize("digits", [50, 200, 1000, 3000], ids=lambda d: f"decimal_{d}")
def test_decimal(digits):
    decimal.getcontext().prec = digits
    root = decimal.Decimal(2).sqrt()
    loop(0.02)
    assert str(root).startswith("1.414")
