"""The generated code of every example, compared byte for byte with the files kept here."""
