package io.kolo;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.nio.file.Path;

/** Reads a JSON file strictly (Jackson; kolo-core's main code has no JSON dependency): throws on anything invalid. */
final class Json {
    private static final JsonMapper STRICT = JsonMapper.builder()
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    private Json() {
    }

    /** The file's value as maps, lists, strings, numbers, booleans and nulls. */
    static Object parse(Path file) throws IOException {
        return STRICT.readValue(file.toFile(), Object.class);
    }
}
