import CYAML

/// One libyaml parser event, reduced to what a flat config file needs.
enum YAMLEvent: Equatable {
    case streamStart, streamEnd, documentStart, documentEnd
    case mappingStart, mappingEnd, sequenceStart, sequenceEnd
    /// `plain`: written without quotes (only a plain scalar can mean null).
    case scalar(String, plain: Bool)
    case alias
}

/// Reads a YAML text as a list of events with their (1-based) line numbers, using libyaml:
/// a real parser, so quoting, escapes, flow and block styles and comments follow the spec.
enum YAMLEvents {
    struct Failure: Error {
        var line: Int
        var problem: String
    }

    static func parse(_ text: String) throws(Failure) -> [(event: YAMLEvent, line: Int)] {
        let parser = UnsafeMutablePointer<yaml_parser_t>.allocate(capacity: 1)
        defer { parser.deallocate() }
        guard yaml_parser_initialize(parser) == 1 else { throw Failure(line: 0, problem: "the YAML parser could not start") }
        defer { yaml_parser_delete(parser) }
        let bytes = Array(text.utf8)
        // libyaml reads the input in place: it must stay alive for the whole parse.
        return try bytes.withUnsafeBufferPointer { (input) throws(Failure) -> [(event: YAMLEvent, line: Int)] in
            yaml_parser_set_input_string(parser, input.baseAddress ?? UnsafePointer(bitPattern: 1), input.count)
            var events: [(event: YAMLEvent, line: Int)] = []
            var event = yaml_event_t()
            while true {
                guard yaml_parser_parse(parser, &event) == 1 else {
                    let mark = parser.pointee.problem_mark
                    let problem = parser.pointee.problem.map { String(cString: $0) } ?? "not valid YAML"
                    throw Failure(line: Int(mark.line) + 1, problem: problem)
                }
                let line = Int(event.start_mark.line) + 1
                let converted = convert(&event)
                yaml_event_delete(&event)
                if let converted { events.append((converted, line)) }
                if converted == .streamEnd { return events }
            }
        }
    }

    private static func convert(_ event: inout yaml_event_t) -> YAMLEvent? {
        switch event.type {
        case YAML_STREAM_START_EVENT: return .streamStart
        case YAML_STREAM_END_EVENT: return .streamEnd
        case YAML_DOCUMENT_START_EVENT: return .documentStart
        case YAML_DOCUMENT_END_EVENT: return .documentEnd
        case YAML_MAPPING_START_EVENT: return .mappingStart
        case YAML_MAPPING_END_EVENT: return .mappingEnd
        case YAML_SEQUENCE_START_EVENT: return .sequenceStart
        case YAML_SEQUENCE_END_EVENT: return .sequenceEnd
        case YAML_ALIAS_EVENT: return .alias
        case YAML_SCALAR_EVENT:
            let scalar = event.data.scalar
            let value = scalar.value.map { String(decoding: UnsafeBufferPointer(start: $0, count: scalar.length), as: UTF8.self) } ?? ""
            return .scalar(value, plain: scalar.style == YAML_PLAIN_SCALAR_STYLE && scalar.tag == nil)
        default: return nil
        }
    }
}
