internal import CEGL

/// A linked GLES program with its attribute and uniform locations. Render thread only.
final class GLProgram {
    let name: GLuint
    private var uniforms: [String: GLint] = [:]

    /// Compiles and links; the error carries the driver's log. The corresponding C functions are
    /// `glCompileShader` and `glLinkProgram`.
    init(vertex: String, fragment: String, label: String) throws(DisplayError) {
        let vertexShader = try GLProgram.compile(GLenum(GL_VERTEX_SHADER), vertex, label: label)
        defer { glDeleteShader(vertexShader) }
        let fragmentShader = try GLProgram.compile(GLenum(GL_FRAGMENT_SHADER), fragment, label: label)
        defer { glDeleteShader(fragmentShader) }
        let program = glCreateProgram()
        glAttachShader(program, vertexShader)
        glAttachShader(program, fragmentShader)
        glBindAttribLocation(program, 0, "a_position")
        glBindAttribLocation(program, 1, "a_texcoord")
        glLinkProgram(program)
        var linked: GLint = 0
        glGetProgramiv(program, GLenum(GL_LINK_STATUS), &linked)
        guard linked == GL_TRUE else {
            var log = [GLchar](repeating: 0, count: 2048)
            glGetProgramInfoLog(program, GLsizei(log.count), nil, &log)
            glDeleteProgram(program)
            throw .gl("linking the \(label) program: \(GLProgram.text(log))")
        }
        name = program
    }

    private static func compile(_ kind: GLenum, _ source: String, label: String) throws(DisplayError) -> GLuint {
        let shader = glCreateShader(kind)
        source.withCString { text in
            var pointer: UnsafePointer<GLchar>? = text
            glShaderSource(shader, 1, &pointer, nil)
        }
        glCompileShader(shader)
        var compiled: GLint = 0
        glGetShaderiv(shader, GLenum(GL_COMPILE_STATUS), &compiled)
        guard compiled == GL_TRUE else {
            var log = [GLchar](repeating: 0, count: 2048)
            glGetShaderInfoLog(shader, GLsizei(log.count), nil, &log)
            glDeleteShader(shader)
            throw .gl("compiling the \(label) shader: \(GLProgram.text(log))")
        }
        return shader
    }

    /// A NUL-terminated C buffer as a Swift string.
    static func text(_ buffer: [GLchar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func uniform(_ uniformName: String) -> GLint {
        if let location = uniforms[uniformName] { return location }
        let location = glGetUniformLocation(name, uniformName)
        uniforms[uniformName] = location
        return location
    }

    func use() { glUseProgram(name) }

    deinit { glDeleteProgram(name) }
}

/// One 2D texture and the size it was last allocated at. Render thread only.
final class GLTexture {
    let name: GLuint
    private(set) var width = 0
    private(set) var height = 0
    private var format: GLenum = 0

    init() {
        var texture: GLuint = 0
        glGenTextures(1, &texture)
        name = texture
        glBindTexture(GLenum(GL_TEXTURE_2D), texture)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MIN_FILTER), GL_LINEAR)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MAG_FILTER), GL_LINEAR)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_WRAP_S), GL_CLAMP_TO_EDGE)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_WRAP_T), GL_CLAMP_TO_EDGE)
    }

    private var samplesNearest = false

    /// Chooses nearest or linear sampling (linear after creation).
    ///
    /// Where a plane maps 1:1 onto output pixels, both pick the same texel, and nearest costs
    /// far less on a software rasteriser (llvmpipe: ~1.75x the frame rate of 1080p YUV).
    func setSamplesNearest(_ nearest: Bool) {
        guard nearest != samplesNearest else { return }
        samplesNearest = nearest
        let filter = nearest ? GL_NEAREST : GL_LINEAR
        glBindTexture(GLenum(GL_TEXTURE_2D), name)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MIN_FILTER), filter)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MAG_FILTER), filter)
    }

    /// Uploads `height` rows of `width` samples with `bytesPerSample` bytes each, `bytesPerRow` apart.
    ///
    /// Padded rows use GLES 3's `GL_UNPACK_ROW_LENGTH` where the context has it; on GLES 2 they are
    /// repacked into a tight buffer first.
    func upload(
        _ base: UnsafeRawPointer, width: Int, height: Int, bytesPerRow: Int, bytesPerSample: Int,
        format: GLenum, internalFormat: GLenum? = nil, rowLengthSupported: Bool
    ) {
        glBindTexture(GLenum(GL_TEXTURE_2D), name)
        glPixelStorei(GLenum(GL_UNPACK_ALIGNMENT), 1)
        let tightRow = width * bytesPerSample
        let reallocate = width != self.width || height != self.height || format != self.format
        let put: (UnsafeRawPointer) -> Void = { pixels in
            if reallocate {
                glTexImage2D(GLenum(GL_TEXTURE_2D), 0, GLint(internalFormat ?? format), GLsizei(width), GLsizei(height), 0,
                             format, GLenum(GL_UNSIGNED_BYTE), pixels)
            } else {
                glTexSubImage2D(GLenum(GL_TEXTURE_2D), 0, 0, 0, GLsizei(width), GLsizei(height),
                                format, GLenum(GL_UNSIGNED_BYTE), pixels)
            }
        }
        if bytesPerRow == tightRow {
            put(base)
        } else if rowLengthSupported, bytesPerRow % bytesPerSample == 0 {
            glPixelStorei(GLenum(GL_UNPACK_ROW_LENGTH), GLint(bytesPerRow / bytesPerSample))
            put(base)
            glPixelStorei(GLenum(GL_UNPACK_ROW_LENGTH), 0)
        } else {
            let packed = UnsafeMutableRawPointer.allocate(byteCount: tightRow * height, alignment: 16)
            defer { packed.deallocate() }
            for row in 0..<height {
                (packed + row * tightRow).copyMemory(from: base + row * bytesPerRow, byteCount: tightRow)
            }
            put(UnsafeRawPointer(packed))
        }
        self.width = width
        self.height = height
        self.format = format
    }

    deinit {
        var texture = name
        glDeleteTextures(1, &texture)
    }
}

/// An RGBA8 colour texture with a framebuffer object around it: the headless display's screen.
final class GLFramebuffer {
    let framebuffer: GLuint
    let texture: GLuint
    let width: Int
    let height: Int

    init(width: Int, height: Int) throws(DisplayError) {
        var texture: GLuint = 0
        glGenTextures(1, &texture)
        glBindTexture(GLenum(GL_TEXTURE_2D), texture)
        glTexImage2D(GLenum(GL_TEXTURE_2D), 0, GL_RGBA, GLsizei(width), GLsizei(height), 0,
                     GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), nil)
        var framebuffer: GLuint = 0
        glGenFramebuffers(1, &framebuffer)
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), framebuffer)
        glFramebufferTexture2D(GLenum(GL_FRAMEBUFFER), GLenum(GL_COLOR_ATTACHMENT0), GLenum(GL_TEXTURE_2D), texture, 0)
        let status = glCheckFramebufferStatus(GLenum(GL_FRAMEBUFFER))
        guard status == GLenum(GL_FRAMEBUFFER_COMPLETE) else {
            glDeleteFramebuffers(1, &framebuffer)
            glDeleteTextures(1, &texture)
            throw .gl("the \(width)x\(height) framebuffer is incomplete (status 0x\(String(status, radix: 16)))")
        }
        self.framebuffer = framebuffer
        self.texture = texture
        self.width = width
        self.height = height
    }

    func bind() { glBindFramebuffer(GLenum(GL_FRAMEBUFFER), framebuffer) }

    deinit {
        var framebuffer = framebuffer, texture = texture
        glDeleteFramebuffers(1, &framebuffer)
        glDeleteTextures(1, &texture)
    }
}

enum GLReadback {
    /// Reads the bound framebuffer as GL lays it out (rows bottom-up, RGBA). Only the copy happens
    /// here, on the render thread; ``ReadbackPixels/image()`` turns it into a picture elsewhere.
    /// The corresponding C function is `glReadPixels`.
    static func readRGBA(width: Int, height: Int) -> ReadbackPixels {
        let bytes = [UInt8](unsafeUninitializedCapacity: width * height * 4) { buffer, count in
            glPixelStorei(GLenum(GL_PACK_ALIGNMENT), 1)
            glReadPixels(0, 0, GLsizei(width), GLsizei(height), GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), buffer.baseAddress)
            count = width * height * 4
        }
        return ReadbackPixels(layout: .rgbaBottomUp, width: width, height: height, bytes: bytes)
    }
}
