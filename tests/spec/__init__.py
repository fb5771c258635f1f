"""The language's specification corpus: valid programs check, invalid ones give their
diagnostic."""
