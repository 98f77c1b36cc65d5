"""Adapters from public evaluation-log formats into the input contract."""

from judge_bias.importers.play_favorites import import_play_favorites

IMPORTERS = {
    "play-favorites": import_play_favorites,
}

__all__ = ["IMPORTERS", "import_play_favorites"]
